import type { Config } from "../config";
import type { Db } from "../db/client";
import type { Actor } from "../domain/actor";
import type { IdempotentRequest } from "../domain/idempotency";
import type { BranchRooms } from "../durable/branch-client";
import type { RateState, Refusal } from "../lib/limit-error";

/**
 * What a use case is called with, whichever door the request came through (a REST route, a web form, an MCP
 * tool): the request's services, who is asking, and what the limits gate left to it. Nothing here is HTTP; each
 * door builds one (src/middleware/caller.ts for the two HTTP doors).
 */
export interface Caller {
  config: Config;
  /** Drizzle on the request's metered D1 session. */
  db: Db;
  /** The branch rooms (Durable Objects), through their client. */
  rooms: BranchRooms;
  /** The webhook queue: announcements already in the outbox are handed to it. */
  webhooks: Queue;
  /** Lets work finish after the answer (the Worker's `waitUntil`), or awaits it where there is no such context. */
  background: (work: Promise<unknown>) => Promise<void>;
  /** The authenticated caller. */
  actor: Actor;
  /** The write's Idempotency-Key: domain writes record it in their batch. */
  idempotency?: IdempotentRequest;
  /** A limit the gate counted but left to the use case (see `DeferredLimit`). */
  deferredLimit?: DeferredLimit;
}

/** A caller nobody has authenticated yet (registering, logging in): the services alone. */
export type Guest = Omit<Caller, "actor" | "idempotency" | "deferredLimit">;

/**
 * A limit the gate counted but left to the use case to enforce (the per-branch segment limit, which does not
 * apply to a bot at its own turn, which only the branch's room knows): `refusal` when it is reached; the use case
 * sets `applies` false when it did not apply, and the gate, settling after the answer, then does not count it.
 */
export interface DeferredLimit {
  key: string;
  rate: RateState;
  refusal: Refusal | null;
  applies: boolean;
}
