import { KeyAlreadyCommitted } from "../domain/shared/idempotency";
import { ApiError, type ErrorCode, apiErrorIn } from "../lib/errors";
import type { ObjectD1 } from "../lib/meter";

/**
 * What a Durable Object RPC returns: errors thrown across RPC lose their properties, so they travel as data,
 * with the D1 work the object did for the call. `keyCommitted` says the write's Idempotency-Key was already
 * committed by an earlier attempt (nothing was written; the caller replays the stored answer).
 */
export type Outcome<T> = (
  | { ok: true; value: T }
  | { ok: false; error: { code: ErrorCode; message: string; details?: Record<string, unknown>; headers?: Record<string, string> } }
  | { ok: false; keyCommitted: true }
) & { d1?: ObjectD1 };

export async function capture<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    if (err instanceof KeyAlreadyCommitted) return { ok: false, keyCommitted: true };
    const e = apiErrorIn(err);
    if (!e) throw err;
    return { ok: false, error: { code: e.code, message: e.message, details: e.details, headers: e.headers } };
  }
}

/** In the Worker: the value, or the error the object reported. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  if ("keyCommitted" in outcome) throw new KeyAlreadyCommitted();
  throw new ApiError(outcome.error.code, outcome.error.message, outcome.error.details, outcome.error.headers);
}
