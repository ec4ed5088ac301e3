import type { Context } from "hono";
import type { AppEnv } from "../context";
import { HTTPException } from "hono/http-exception";
import { KeyAlreadyCommitted } from "../domain/shared/idempotency";
import type { ErrorBody } from "../lib/envelope";
import { ApiError, apiErrorIn, validationError } from "../lib/errors";

/** Any error as the ApiError a client sees: ours as they are, validators' as VALIDATION_ERROR, anything else logged and INTERNAL_ERROR. */
export function toApiError(err: unknown, requestId: string | undefined): ApiError {
  const ours = apiErrorIn(err);
  if (ours) return ours;
  // Replaced by the stored answer in limitsAndIdempotency(); rendered here only so it is not logged as a fault.
  if (err instanceof KeyAlreadyCommitted) return new ApiError("CONFLICT", err.message);
  // Hono's validators throw 400 for a body that is not JSON and 415 for one sent as another media type.
  if (err instanceof HTTPException && (err.status === 400 || err.status === 415)) {
    const issue = err.status === 415 ? "Content-Type must be application/json" : "malformed JSON";
    return validationError([{ field: "(body)", issue }]);
  }
  console.error(JSON.stringify({ at: new Date().toISOString(), request_id: requestId ?? null, event: "unhandled error" }), err);
  return new ApiError("INTERNAL_ERROR", "Internal server error");
}

/** The one rendering of every error: the envelope with the code's status and the error's own headers. */
export function renderError(c: Context<AppEnv>, err: unknown) {
  const requestId = c.get("requestId");
  const e = toApiError(err, requestId);
  const body: ErrorBody = { status: "error", error: { code: e.code, message: e.message } };
  if (e.details) body.error.details = e.details;
  if (requestId) body.error.request_id = requestId;
  c.set("errorCode", e.code);
  return c.json(body, e.status, e.headers);
}
