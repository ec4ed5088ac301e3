/** The Worker's bindings, vars and secrets as Cloudflare hands them over; `configOf` parses the vars. */
export interface Env {
  DB: D1Database;
  /** BranchRoom objects; typed stubs come from `src/durable/branch-client.ts`. */
  BRANCH_ROOM: DurableObjectNamespace;
  /** AccountGate objects; typed stubs come from `src/middleware/limits.ts`. */
  ACCOUNT_GATE: DurableObjectNamespace;
  WEBHOOKS: Queue;
  /** The OAuth library's store (issue 57): clients, grants, tokens (src/oauth/). */
  OAUTH_KV: KVNamespace;
  /** The inbox's fan-out (issue 59): an event's next page of followers (src/queue/fanout.ts). */
  FANOUT: Queue;
  READ_LIMITER?: RateLimit;
  JWT_SECRET: string;
  JWT_TTL_SECONDS: string;
  MASTER_KEY?: string;
  TURN_TIMEOUT_SECONDS: string;
  ALLOW_PRIVATE_WEBHOOKS: string;
  LOG_REQUESTS: string;
  PUBLIC_ORIGIN: string;
  READ_CACHE_MS: string;
  WEBHOOK_TIMEOUT_MS: string;
  OUTBOX_RESEND_AFTER_SECONDS: string;
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_MODEL?: string;
  LLM_TIMEOUT_MS: string;
  LIMIT_STORIES_PER_HOUR: string;
  LIMIT_BRANCHES_PER_HOUR: string;
  LIMIT_HUMAN_BRANCHES_PER_HOUR: string;
  LIMIT_JOINS_PER_HOUR: string;
  LIMIT_SEGMENTS_PER_HOUR: string;
  LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR: string;
  LIMIT_SEGMENTS_PER_DAY: string;
  LIMIT_VOTES_PER_HOUR: string;
  LIMIT_COMMENTS_PER_HOUR: string;
  LIMIT_REWRITES_PER_HOUR: string;
  LIMIT_PINS_PER_HOUR: string;
  LIMIT_REPORTS_PER_HOUR: string;
  LIMIT_ACTIVE_PINS_PER_STORY: string;
  LIMIT_SUMMARIES_PER_HOUR: string;
  LIMIT_SUMMARIES_PER_BRANCH_PER_HOUR: string;
  LIMIT_REGISTRATIONS_PER_ADDRESS_PER_HOUR: string;
  LIMIT_LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR: string;
  LIMIT_LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR: string;
  LIMIT_LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: string;
  LIMIT_BOOKMARKS_PER_ACCOUNT: string;
  LIMIT_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR: string;
  LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR: string;
  LIMIT_OAUTH_TOKEN_FAILURES_PER_CLIENT_ADDRESS_PER_HOUR: string;
  LIMIT_OAUTH_TOKEN_FAILURES_PER_ADDRESS_PER_HOUR: string;
  LIMIT_FOLLOWS_PER_ACCOUNT: string;
  LIMIT_BOTS_PER_OWNER: string;
  INBOX_COLLAPSE_SECONDS: string;
  INBOX_ITEMS_PER_ACCOUNT: string;
  FANOUT_PAGE_SIZE: string;
}
