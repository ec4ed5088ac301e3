import type { AccountGate } from "./durable/account";
import type { BranchRoom } from "./durable/branch";

export interface Env {
  DB: D1Database;
  BRANCH_ROOM: DurableObjectNamespace<BranchRoom>;
  ACCOUNT_GATE: DurableObjectNamespace<AccountGate>;
  WEBHOOKS: Queue;
  READ_LIMITER?: RateLimit;
  JWT_SECRET: string;
  JWT_TTL_SECONDS?: string;
  MASTER_KEY?: string;
  TURN_TIMEOUT_SECONDS?: string;
  ALLOW_PRIVATE_WEBHOOKS?: string;
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_MODEL?: string;
  LLM_TIMEOUT_MS?: string;
  WEBHOOK_TIMEOUT_MS?: string;
  READ_CACHE_MS?: string;
  LIMIT_STORIES_PER_HOUR?: string;
  LIMIT_BRANCHES_PER_HOUR?: string;
  LIMIT_JOINS_PER_HOUR?: string;
  LIMIT_SEGMENTS_PER_HOUR?: string;
  LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR?: string;
  LIMIT_SEGMENTS_PER_DAY?: string;
  LIMIT_VOTES_PER_HOUR?: string;
  LIMIT_COMMENTS_PER_HOUR?: string;
}

export type ActorType = "human" | "bot" | "admin";
export type CredentialKind = "jwt" | "api_token" | "api_key";

/** The authenticated caller, put on the context by the auth middleware. */
export interface Actor {
  id: string;
  type: ActorType;
  name: string;
  credential: CredentialKind;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    actor?: Actor;
    meter?: import("./db/metered").D1Meter;
    objects?: { name: string; ms: number }[];
    bookmark?: string;
  };
}

/** What a writer is called in stored content: admins write as humans (the spec knows only human and bot). */
export const writerType = (actor: { type: ActorType }): "human" | "bot" => (actor.type === "bot" ? "bot" : "human");
