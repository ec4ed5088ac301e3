import { z } from "zod";
import type { Env } from "./env";

/**
 * The Worker's settings, parsed once per environment object from the vars in wrangler.toml (and the secrets).
 * Every number the service is configured by lives in wrangler.toml `[vars]`; nothing else reads `env.X` strings.
 */
/** A story's content rating, mildest first; `general` by default. */
export const RATINGS = ["general", "teen", "mature"] as const;
export type Rating = (typeof RATINGS)[number];

/**
 * The content warnings a story may carry: a fixed list, in the order stories show them. Fixed here, not in
 * `[vars]`: the OpenAPI document's enums and the clients generated from it are built from it, so an environment that
 * changed it would refuse what its own document offers. `/llms.txt` prints it.
 */
export const CONTENT_WARNINGS = ["violence", "death", "abuse", "self_harm", "sexual_content"] as const;
export type ContentWarning = (typeof CONTENT_WARNINGS)[number];

const count = z.coerce.number().int().min(0);
/** The longest window, in days, any read of the logs counts in (a week); LOGS_KEEP_DAYS may not be shorter. */
export const LOGS_READ_DAYS = 7;
const positive = z.coerce.number().int().min(1);
const flag = z.enum(["true", "false"]).transform((v) => v === "true");
const secret = z.string().min(1).optional();
/** An origin (`https://host[:port]`, no path): what `new URL(v).origin` gives back unchanged, a trailing slash aside. */
const origin = z
  .string()
  .transform((v) => v.replace(/\/$/, ""))
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol) && new URL(v).origin === v, "an origin such as https://storyloom.example");

const schema = z.object({
  JWT_SECRET: z.string().min(1),
  JWT_TTL_SECONDS: positive,
  MASTER_KEY: secret,
  TURN_TIMEOUT_SECONDS: positive,
  ALLOW_PRIVATE_WEBHOOKS: flag,
  LOG_REQUESTS: flag,
  PUBLIC_ORIGIN: origin,
  READ_CACHE_MS: count,
  WEBHOOK_TIMEOUT_MS: positive,
  OUTBOX_RESEND_AFTER_SECONDS: positive,
  LLM_BASE_URL: secret,
  LLM_API_KEY: secret,
  LLM_MODEL: secret,
  LLM_TIMEOUT_MS: positive,
  LIMIT_STORIES_PER_HOUR: count,
  LIMIT_BRANCHES_PER_HOUR: count,
  LIMIT_HUMAN_BRANCHES_PER_HOUR: count,
  LIMIT_JOINS_PER_HOUR: count,
  LIMIT_SEGMENTS_PER_HOUR: count,
  LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR: count,
  LIMIT_SEGMENTS_PER_DAY: count,
  LIMIT_VOTES_PER_HOUR: count,
  LIMIT_COMMENTS_PER_HOUR: count,
  LIMIT_REWRITES_PER_HOUR: count,
  LIMIT_PINS_PER_HOUR: count,
  LIMIT_REPORTS_PER_HOUR: count,
  LIMIT_ACTIVE_PINS_PER_STORY: count,
  LIMIT_SUMMARIES_PER_HOUR: count,
  LIMIT_SUMMARIES_PER_BRANCH_PER_HOUR: count,
  LIMIT_REGISTRATIONS_PER_ADDRESS_PER_HOUR: count,
  LIMIT_LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR: count,
  LIMIT_LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR: count,
  LIMIT_LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: count,
  LIMIT_BOOKMARKS_PER_ACCOUNT: count,
  LIMIT_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR: count,
  LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR: count,
  LIMIT_OAUTH_TOKEN_FAILURES_PER_CLIENT_ADDRESS_PER_HOUR: count,
  LIMIT_OAUTH_TOKEN_FAILURES_PER_ADDRESS_PER_HOUR: count,
  LIMIT_FOLLOWS_PER_ACCOUNT: count,
  LIMIT_BOTS_PER_OWNER: count,
  INBOX_COLLAPSE_SECONDS: count,
  INBOX_ITEMS_PER_ACCOUNT: positive,
  INBOX_KEEP_DAYS: positive,
  // Never shorter than the longest window a read of the logs counts in (a week: GET /logs by default, the
  // `last_week` of /logs/stats, the dashboard's last week, `sort=active`), or those answers would change as the sweeper prunes.
  LOGS_KEEP_DAYS: z.coerce.number().int().min(LOGS_READ_DAYS),
  FANOUT_PAGE_SIZE: positive,
  SEARCH_STORIES_PER_SHARD: positive,
  SEARCH_HAND_OVER_MS: count,
});

function toConfig(v: z.infer<typeof schema>) {
  return {
    jwt: { secret: v.JWT_SECRET, ttlSeconds: v.JWT_TTL_SECONDS },
    masterKey: v.MASTER_KEY ?? null,
    turnTimeoutMs: v.TURN_TIMEOUT_SECONDS * 1000,
    allowPrivateWebhooks: v.ALLOW_PRIVATE_WEBHOOKS,
    logRequests: v.LOG_REQUESTS,
    /** The site's own origin: absolute addresses in pages are built on it, and the live stream accepts its browsers. */
    publicOrigin: v.PUBLIC_ORIGIN,
    readCacheMs: v.READ_CACHE_MS,
    webhookTimeoutMs: v.WEBHOOK_TIMEOUT_MS,
    outboxResendAfterMs: v.OUTBOX_RESEND_AFTER_SECONDS * 1000,
    llm:
      v.LLM_BASE_URL && v.LLM_API_KEY && v.LLM_MODEL
        ? { baseUrl: v.LLM_BASE_URL, apiKey: v.LLM_API_KEY, model: v.LLM_MODEL, timeoutMs: v.LLM_TIMEOUT_MS }
        : null,
    limits: {
      storiesPerHour: v.LIMIT_STORIES_PER_HOUR,
      /** Forks per hour: `branchesPerHour` paces bots, `humanBranchesPerHour` people (admins have none). */
      branchesPerHour: v.LIMIT_BRANCHES_PER_HOUR,
      humanBranchesPerHour: v.LIMIT_HUMAN_BRANCHES_PER_HOUR,
      joinsPerHour: v.LIMIT_JOINS_PER_HOUR,
      segmentsPerHour: v.LIMIT_SEGMENTS_PER_HOUR,
      segmentsPerBranchPerHour: v.LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR,
      segmentsPerDay: v.LIMIT_SEGMENTS_PER_DAY,
      votesPerHour: v.LIMIT_VOTES_PER_HOUR,
      commentsPerHour: v.LIMIT_COMMENTS_PER_HOUR,
      rewritesPerHour: v.LIMIT_REWRITES_PER_HOUR,
      pinsPerHour: v.LIMIT_PINS_PER_HOUR,
      reportsPerHour: v.LIMIT_REPORTS_PER_HOUR,
      activePinsPerStory: v.LIMIT_ACTIVE_PINS_PER_STORY,
      summariesPerHour: v.LIMIT_SUMMARIES_PER_HOUR,
      summariesPerBranchPerHour: v.LIMIT_SUMMARIES_PER_BRANCH_PER_HOUR,
      registrationsPerAddressPerHour: v.LIMIT_REGISTRATIONS_PER_ADDRESS_PER_HOUR,
      loginFailuresPerAccountAddressPerHour: v.LIMIT_LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR,
      loginFailuresPerAccountPerHour: v.LIMIT_LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR,
      loginFailuresPerAddressPerHour: v.LIMIT_LOGIN_FAILURES_PER_ADDRESS_PER_HOUR,
      bookmarksPerAccount: v.LIMIT_BOOKMARKS_PER_ACCOUNT,
      oauthRegistrationsPerAddressPerHour: v.LIMIT_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR,
      oauthFailuresPerAddressPerHour: v.LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR,
      oauthTokenFailuresPerClientAddressPerHour: v.LIMIT_OAUTH_TOKEN_FAILURES_PER_CLIENT_ADDRESS_PER_HOUR,
      oauthTokenFailuresPerAddressPerHour: v.LIMIT_OAUTH_TOKEN_FAILURES_PER_ADDRESS_PER_HOUR,
      followsPerAccount: v.LIMIT_FOLLOWS_PER_ACCOUNT,
      botsPerOwner: v.LIMIT_BOTS_PER_OWNER,
    },
    /**
     * The inbox: how long an item takes the next events of its kind, how many items an account keeps, a fan-out page
     * (`FanoutOptions`), and how long an item is kept after its last activity (the sweeper).
     */
    inbox: {
      collapseMs: v.INBOX_COLLAPSE_SECONDS * 1000,
      itemsPerAccount: v.INBOX_ITEMS_PER_ACCOUNT,
      keepMs: v.INBOX_KEEP_DAYS * 86_400_000,
      pageSize: v.FANOUT_PAGE_SIZE,
    },
    /** How long a log entry is kept (the sweeper prunes older ones; the all-time figures are counters). */
    logsKeepMs: v.LOGS_KEEP_DAYS * 86_400_000,
    /** Search: how many stories (by rowid) one shard holds (D-SCALE-3), and a story's hand-over window (`SearchShards.changed`). */
    search: { storiesPerShard: v.SEARCH_STORIES_PER_SHARD, handOverMs: v.SEARCH_HAND_OVER_MS },
  };
}

export type Config = ReturnType<typeof toConfig>;
export type LlmConfig = NonNullable<Config["llm"]>;

const parsed = new WeakMap<object, Config>();

/** The typed settings of this environment; a missing or malformed var fails loudly, naming it. */
export function configOf(env: Env): Config {
  let config = parsed.get(env);
  if (!config) {
    const result = schema.safeParse(env);
    if (!result.success) {
      const names = result.error.issues.map((i) => i.path.join(".")).join(", ");
      throw new Error(`Worker configuration is invalid: ${names} (see wrangler.toml [vars] and the secrets)`);
    }
    config = toConfig(result.data);
    parsed.set(env, config);
  }
  return config;
}
