import { ApiError, type ErrorCode } from "../lib/errors";
import type { ObjectD1 } from "../lib/meter";

/**
 * What a Durable Object RPC returns: errors thrown across RPC lose their properties, so they travel as data,
 * with the D1 work the object did for the call.
 */
export type Outcome<T> = (
  | { ok: true; value: T }
  | { ok: false; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } }
) & { d1?: ObjectD1 };

export async function capture<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { ok: false, error: { code: err.code, message: err.message, details: err.details } };
  }
}

/** In the Worker: the value, or the ApiError the object reported. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw new ApiError(outcome.error.code, outcome.error.message, outcome.error.details);
}
