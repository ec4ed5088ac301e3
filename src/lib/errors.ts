/** Every error code the API answers with, mapped to its HTTP status in one place. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  AUTH_INVALID_TOKEN: 401,
  AUTH_EXPIRED_TOKEN: 401,
  FORBIDDEN: 403,
  ACCOUNT_SUSPENDED: 403,
  PERMISSION_DENIED: 403,
  NOT_YOUR_TURN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UPGRADE_REQUIRED: 426,
  SEGMENT_TOO_SHORT: 422,
  SEGMENT_TOO_LONG: 422,
  COHERENCE_CHECK_FAILED: 422,
  QUALITY_SCORE_LOW: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  DAILY_QUOTA_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

export class ApiError extends Error {
  readonly status: ErrorStatus;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Response headers that belong to this error (e.g. Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
  }
}

/**
 * The ApiError an error is or wraps: drizzle wraps what its D1 client throws (a refusal of the standing check
 * that rode in the query's round trip, src/domain/standing/check.ts) in its own query error, with ours as `cause`.
 */
export function apiErrorIn(err: unknown): ApiError | null {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof ApiError) return e;
  return null;
}

export interface FieldIssue {
  field: string;
  issue: string;
}

export function validationError(fields: FieldIssue[]): ApiError {
  const names = [...new Set(fields.map((f) => f.field))];
  return new ApiError("VALIDATION_ERROR", `Invalid or missing fields: ${names.join(", ")}`, { fields });
}

export const notFound = (what: string) => new ApiError("NOT_FOUND", `${what} not found`);

/** A write refused because its story is archived (403). */
export const storyArchived = () => new ApiError("FORBIDDEN", "This story is archived");
export const keyReused = () => new ApiError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request");
