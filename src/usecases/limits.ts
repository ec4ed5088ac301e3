import type { Config } from "../config";
import type { Db } from "../db/client";
import { flushPrelude } from "../db/metered";
import { type IdempotentRequest, answerBody, committedAnswer } from "../domain/shared/idempotency";
import type { Actor } from "../domain/shared/actor";
import type { SegmentLimits } from "../domain/stories/segment-quota";
import type { AccountGate, Counter, StoredResponse } from "../durable/account";
import { keyReused } from "../lib/errors";
import { type RateState, limitError } from "../lib/limit-error";
import type { RequestMeter } from "../lib/meter";
import type { Caller, SegmentQuota } from "./caller";

/**
 * The per-account limits and the idempotency rule of every creating write, whichever door it comes through (a
 * REST route through `limitsAndIdempotency()`, a web form through the same middleware, an MCP tool through
 * `limited()`): one table of counters, one admission, one settlement. Segments are counted by the branch's room
 * in the write's own batch (`segmentQuotaOf`); every other action by the account's gate (src/durable/account.ts).
 */

export type LimitedAction = "story" | "branch" | "join" | "segment" | "vote" | "comment" | "rewrite" | "pin" | "report";

/** An Idempotency-Key, whichever door carries it (a header, a tool argument): 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * What the limits need of a request: the config's numbers, the account gates, the meter that times them, and
 * the request's D1 (a replayed answer needs no trip of its own, yet the caller's standing is checked there first).
 */
export interface LimitServices {
  config: Config;
  accountGates: DurableObjectNamespace<AccountGate>;
  meter: RequestMeter;
  db: Db;
}

/** An Idempotency-Key and the fingerprint of the request that carried it. */
export interface IdempotencyClaim {
  key: string;
  hash: string;
}

const HOUR = 3600_000;

const hourly = (key: string, limit: number): Counter => ({ key, limit, windowMs: HOUR, label: `${limit} per hour`, code: "RATE_LIMIT_EXCEEDED" });

/**
 * The counters an action by a `writer` (a person or a bot; admins have none) draws on, numbers from wrangler.toml
 * through the config; segments are the room's. People write at their own pace: a person's forks have a limit sized
 * for people, one fork an hour paces bots.
 */
export function countersFor(action: LimitedAction, writer: "human" | "bot", limits: Config["limits"]): Counter[] {
  switch (action) {
    case "story":
      return [hourly("story", limits.storiesPerHour)];
    case "branch":
      return [hourly("branch", writer === "human" ? limits.humanBranchesPerHour : limits.branchesPerHour)];
    case "join":
      return [hourly("join", limits.joinsPerHour)];
    case "vote":
      return [hourly("vote", limits.votesPerHour)];
    case "comment":
      return [hourly("comment", limits.commentsPerHour)];
    case "rewrite":
      return [hourly("rewrite", limits.rewritesPerHour)];
    case "pin":
      return [hourly("pin", limits.pinsPerHour)];
    case "report":
      return [hourly("report", limits.reportsPerHour)];
    default:
      return [];
  }
}

/** Which successful writes count against the limit: a join that finds the bot already queued does not. */
export const countsAgainstLimit = (action: LimitedAction, created: boolean) => action !== "join" || created;

/**
 * The writer's segment limits, which the branch's room counts in the write's own batch (none for admins). People
 * write at their own pace: a person is held to the account-wide limits only; the per-branch one paces bots.
 */
export function segmentQuotaOf(actor: Actor, config: Config): SegmentQuota | undefined {
  if (actor.type === "admin") return undefined;
  const limits: SegmentLimits = {
    perHour: config.limits.segmentsPerHour,
    perDay: config.limits.segmentsPerDay,
    perBranchPerHour: actor.type === "bot" ? config.limits.segmentsPerBranchPerHour : null,
  };
  return { limits };
}

/** How the write ended, for the gate: whether it counts, and (with a key) the answer to store for replays. */
export interface Settlement {
  counted: boolean;
  response: StoredResponse | null;
}

export type Admitted =
  /** An earlier request with this key: its stored answer (it counts nothing again). */
  | { kind: "replay"; response: StoredResponse; rate: RateState | null }
  /** Go ahead; then settle exactly once with how it ended. */
  | { kind: "proceed"; rate: RateState | null; settle: (outcome: Settlement) => Promise<void> };

const nothingToSettle = async () => {};

/**
 * Admits one write of `action` by `actor` (not a segment: the room counts those): replays an earlier answer to
 * the same Idempotency-Key, refuses a key reused with another request (422 `IDEMPOTENCY_KEY_REUSED`) or a write
 * over a limit (the one 429), else reserves the write's hits until `settle`. Admins are not limited.
 */
export async function admitWrite(services: LimitServices, actor: Actor, action: LimitedAction, idem: IdempotencyClaim | null): Promise<Admitted> {
  const counters = actor.type === "admin" ? [] : countersFor(action, actor.type, services.config.limits);
  if (!idem && !counters.length) return { kind: "proceed", rate: null, settle: nothingToSettle };
  const ns = services.accountGates;
  const gate = ns.get(ns.idFromName(actor.id));
  const timed = <T>(call: () => Promise<T>) => services.meter.timeObject("AccountGate", call);
  const admission = await timed(async () => await gate.admit(idem, counters));
  if (admission.kind === "replay") {
    // A stored answer is given only to a caller in good standing (a JWT's check has had no trip to ride in yet).
    await flushPrelude(services.db.$client);
    return { kind: "replay", response: admission.response, rate: admission.rate };
  }
  if (admission.kind === "mismatch") throw keyReused();
  if (admission.kind === "limited") throw limitError(admission);
  const keys = counters.map((k) => k.key);
  const settle = ({ counted, response }: Settlement) => timed(() => gate.settle(idem, admission.reservation, { counted, response, keys }));
  return { kind: "proceed", rate: admission.rate, settle };
}

/**
 * A door without HTTP answers to store (an MCP tool): runs `write` under the same limits and idempotency as REST,
 * counting it only when it succeeded and `counts` says so (a join that found the bot queued does not). With a key
 * (`caller.idempotency`), a repeat answers the first write's data and writes nothing; the same key with another
 * request is 422 `IDEMPOTENCY_KEY_REUSED`. A refusal is thrown before `write` runs. A counted write's settlement is
 * handed to `background`; a keyed one's is awaited (its answer must be stored before it is given).
 */
export async function limited<T>(
  services: LimitServices,
  caller: Caller,
  action: Exclude<LimitedAction, "segment">,
  write: () => Promise<T>,
  options: { created?: (value: T) => boolean } = {},
): Promise<T> {
  const idem = caller.idempotency ?? null;
  const admitted = await admitWrite(services, caller.actor, action, idem);
  if (admitted.kind === "replay") return dataOf<T>(admitted.response.body);
  let value: T;
  try {
    value = await write();
  } catch (err) {
    await admitted.settle({ counted: false, response: null });
    return idem ? replayCommitted<T>(caller.db, idem, err) : Promise.reject(err);
  }
  const counted = countsAgainstLimit(action, options.created?.(value) ?? true);
  const response = idem ? { status: 200, body: answerBody(value), contentType: "application/json", bookmark: null } : null;
  const settled = admitted.settle({ counted, response });
  // As over HTTP: a request that counted need not wait for its confirmation; a release, or a stored answer, is awaited.
  if (counted && !idem) await caller.background(settled);
  else await settled;
  return value;
}

/** The `data` of a stored success envelope. */
const dataOf = <T>(body: string) => (JSON.parse(body) as { data: T }).data;

/**
 * A keyed write that failed may have been committed by an earlier attempt whose answer was lost (a crash), or the
 * rules may refuse the retry because of it (the turn has passed since): D1 recorded the answer with the key, so
 * a failed keyed write first asks D1. Nothing recorded: the write's own error.
 */
export async function replayCommitted<T>(db: Db, idem: IdempotentRequest, err: unknown): Promise<T> {
  const stored = await committedAnswer(db, idem);
  if (!stored) throw err;
  if (stored.hash !== idem.hash) throw keyReused();
  return dataOf<T>(stored.body);
}
