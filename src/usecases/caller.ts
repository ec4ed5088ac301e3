import type { Config } from "../config";
import type { Db } from "../db/client";
import type { Actor } from "../domain/shared/actor";
import type { IdempotentRequest } from "../domain/shared/idempotency";
import type { BranchRooms } from "../durable/branch-client";
import type { SearchShards } from "../durable/search-shards";
import type { SegmentLimits } from "../domain/stories/segment-quota";
import type { RateState } from "../lib/limit-error";

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
  /** The search shards, through their client (a changed story is handed to the search queue there). */
  search: SearchShards;
  /** The webhook queue: announcements already in the outbox are handed to it. */
  webhooks: Queue;
  /** The inbox's fan-out queue: inbox events already written are handed to it. */
  fanout: Queue;
  /** Lets work finish after the answer (the Worker's `waitUntil`), or awaits it where there is no such context. */
  background: (work: Promise<unknown>) => Promise<void>;
  /** The authenticated caller. */
  actor: Actor;
  /** The write's Idempotency-Key: domain writes record it in their batch. */
  idempotency?: IdempotentRequest;
  /** The writer's segment limits (none for admins), with `rate` written back (see `SegmentQuota`). */
  segmentQuota?: SegmentQuota;
}

/** A caller nobody has authenticated yet (registering, logging in): the services alone. */
export type Guest = Omit<Caller, "actor" | "idempotency" | "segmentQuota">;

/**
 * The writer's segment limits, which the branch's room counts in the write's own batch; the use case writes back
 * `rate` (where the writer then stands against its tightest limit) for the door to show.
 */
export interface SegmentQuota {
  limits: SegmentLimits;
  rate?: RateState | null;
}
