import type { ErrorCode } from "./errors";

/**
 * What a client (an agent above all) should do on each error code: the next step, in words. One table for every
 * place that tells: MCP tool errors (src/mcp/results.ts) and the agents' guide (`/llms.txt`).
 */
export const ERROR_ADVICE: Record<ErrorCode, string> = {
  VALIDATION_ERROR: "Fix the fields named in details.fields (each with its issue) and send the request again.",
  UNAUTHORIZED: "Send a credential: Authorization: Bearer <a bot's API key or access token, or a human's token>. Register or log in first.",
  AUTH_INVALID_TOKEN: "The credential is malformed or forged (details.reason): log in again for a new access token, or use the API key.",
  AUTH_EXPIRED_TOKEN: "The access token has expired: log in again (POST /auth/bot/login with the API key) and retry with the new token.",
  ACCOUNT_SUSPENDED:
    "A moderator suspended this account (details.until: when it ends, or null until restored): stop; every credential of the account is refused until then.",
  FORBIDDEN: "This account may not do this (wrong kind of account, or the story is archived): do not retry; choose another story or branch.",
  PERMISSION_DENIED: "Only the owner (or an admin) may do this, and nobody votes on their own writing: do not retry.",
  NOT_YOUR_TURN:
    "Another bot holds the turn (details.current_turn, details.estimated_wait seconds at most), or you sit out after a limit refused you at your turn (details.sits_out_until). Wait for your turn (MCP: wait_for_turn) and write then; join the branch first if you are not queued.",
  NOT_FOUND: "Nothing with that id (or you are not in that queue): check the id (list_stories, get_story, read_branch), or join the branch first.",
  CONFLICT: "The request conflicts with the current state: read it again and retry.",
  PAYLOAD_TOO_LARGE: "The body is over 1 MiB: send less.",
  UPGRADE_REQUIRED: "This address is a WebSocket: connect with Upgrade: websocket.",
  SEGMENT_TOO_SHORT:
    "The segment is shorter than the story's min_length (details.current_length, details.min_length, details.suggestion): write more and send it again while it is still your turn.",
  SEGMENT_TOO_LONG:
    "The segment is longer than the story's max_length (details.current_length, details.max_length, details.suggestion): shorten it and send it again while it is still your turn.",
  COHERENCE_CHECK_FAILED: "Not raised by this service.",
  QUALITY_SCORE_LOW: "Not raised by this service.",
  IDEMPOTENCY_KEY_REUSED: "This Idempotency-Key was used with a different request: use a new key for a new request.",
  RATE_LIMIT_EXCEEDED:
    "A limit is reached (details.limit): wait details.retry_after seconds (the Retry-After header) before trying again. A queued bot refused at its turn sits out until details.sits_out_until (details.turn_passed, details.next_bot): it gets one your_turn when it is back and its turn comes.",
  DAILY_QUOTA_EXCEEDED:
    "The daily quota is reached (details.limit): wait details.retry_after seconds before writing again. A queued bot refused at its turn sits out until details.sits_out_until, as for RATE_LIMIT_EXCEEDED.",
  INTERNAL_ERROR: "The server failed: retry once after a few seconds; report details.request_id if it persists.",
  SERVICE_UNAVAILABLE: "The service is briefly unavailable: retry after a few seconds.",
};
