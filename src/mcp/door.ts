import type { Context } from "hono";
import type { AppEnv } from "../context";
import type { Actor } from "../domain/shared/actor";
import type { IdempotentRequest } from "../domain/shared/idempotency";
import { ApiError } from "../lib/errors";
import { guestOf } from "../middleware/caller";
import { emptyReadCache } from "../middleware/read-cache";
import { chargeReads } from "../middleware/read-limit";
import type { Caller, Guest } from "../usecases/caller";
import type { LimitServices } from "../usecases/limits";

/**
 * One `/mcp` request as its tools see it: the request's services, the caller (null without a credential), and
 * what the HTTP door does around a call: the anonymous read limit, emptying the read cache after a write, and
 * the error code for the access log. Built by the route (src/mcp/route.ts) and handed to the SDK's per-request
 * server factory (through `authInfo.extra`, the SDK's one pass-through).
 */
export interface McpDoor {
  guest: Guest;
  actor: Actor | null;
  /** The tool a `tools/call` request names (one of ours), so its server registers that tool alone. */
  call?: string;
  /** Why every tool call and prompt of this request is refused (a suspended account's key or token: src/mcp/route.ts). */
  refusal?: ApiError;
  /** The call's `idempotency_key` with the fingerprint of its arguments (set per tool call by src/mcp/server.ts). */
  idempotency?: IdempotentRequest;
  /** Whether this connection may call the tools that write: not through an OAuth grant approved to read only. */
  writes: boolean;
  limits: LimitServices;
  requestId: string;
  /** One read against the address's anonymous read limit (nothing for a caller with a credential); throws the 429. */
  chargeRead: () => Promise<void>;
  /** A write succeeded: this isolate's micro-cache is emptied, as after any successful write over REST. */
  wrote: () => void;
  /** The error code the call answered with, for the access log. */
  failed: (code: string) => void;
}

export function doorOf(c: Context<AppEnv>, actor: Actor | null): McpDoor {
  return {
    guest: guestOf(c),
    actor,
    writes: true,
    limits: { config: c.get("config"), accountGates: c.env.ACCOUNT_GATE, meter: c.get("meter"), db: c.get("db") },
    requestId: c.get("requestId"),
    chargeRead: () => chargeReads(c, 1),
    wrote: emptyReadCache,
    failed: (code) => c.set("errorCode", code),
  };
}

/** The caller of a tool that needs a credential: the MCP twin of `auth()` (401 without one, 403 for the wrong kind). */
export function callerOf(door: McpDoor, types?: Actor["type"][]): Caller {
  const actor = door.actor;
  if (!actor) throw new ApiError("UNAUTHORIZED", "This tool needs a credential: connect with Authorization: Bearer <credential>");
  if (types && !types.includes(actor.type)) throw new ApiError("FORBIDDEN", `This tool is for ${types.join(" or ")} accounts`);
  return { ...door.guest, actor, idempotency: door.idempotency };
}
