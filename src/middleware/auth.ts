import type { Context, MiddlewareHandler } from "hono";
import type { Config } from "../config";
import type { AppEnv } from "../context";
import type { Db } from "../db/client";
import type { Actor, ActorType, CredentialKind } from "../domain/shared/actor";
import { API_TOKEN_PREFIX, BOT_KEY_PREFIX, actorForApiToken, actorForBotKey } from "../domain/accounts/auth";
import type { KeyStanding } from "../domain/standing/rule";
import { type Viewer, viewerOf } from "../domain/shared/visibility";
import { ApiError } from "../lib/errors";
import { type JwtClaims, verifyJwt } from "../lib/jwt";
import { requireStanding, watchStanding } from "./standing";

/** The credential a request carries: `Authorization: Bearer …`, else `X-API-Key`; a malformed Authorization is 401. */
export function readCredential(c: Context<AppEnv>): string | null {
  const header = c.req.header("authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
    if (!match) throw new ApiError("UNAUTHORIZED", 'Authorization header must be "Bearer <credential>"');
    return match[1];
  }
  return c.req.header("x-api-key")?.trim() || null;
}

/**
 * Turns any of the four credential kinds into the caller: JWTs need no D1 look-up (their account's standing rides
 * in the request's first trip: `watchStanding`), keys and tokens one, which reads their account's standing too.
 */
export async function resolveActor(db: Db, config: Config, credential: string, expect: KeyStanding = {}): Promise<Actor> {
  if (credential.startsWith(BOT_KEY_PREFIX)) return actorForBotKey(db, credential, expect);
  if (credential.startsWith(API_TOKEN_PREFIX)) return actorForApiToken(db, credential, expect);
  return actorOfClaims(await verifyJwt(credential, config.jwt.secret));
}

/** A verified JWT's caller: its account as the token claims it, and its session (checked with the standing). */
export const actorOfClaims = (claims: JwtClaims): Actor => ({
  id: claims.sub,
  type: claims.typ,
  name: claims.name,
  credential: "jwt",
  session: { jti: claims.jti, exp: claims.exp, issuedMs: claims.iat_ms ?? claims.iat * 1000 },
});

interface AuthOptions {
  /** Caller types allowed; others get 403 FORBIDDEN. */
  types?: ActorType[];
  /** Credential kinds allowed; others get 403 FORBIDDEN. */
  credentials?: CredentialKind[];
  /** When true a missing credential is allowed (a present but bad one is still refused). */
  optional?: boolean;
  /** When true a suspended account is served too (logging out); a logged-out or deleted one is still refused. */
  evenSuspended?: boolean;
}

/**
 * The caller if the request carries a credential that verifies, else null (no credential, or one that does
 * not verify: the read limit treats both as anonymous). Remembered on `c.var.actor` for `auth()`.
 */
export async function verifiedActor(c: Context<AppEnv>): Promise<Actor | null> {
  const known = c.get("actor");
  if (known) return known;
  try {
    const credential = readCredential(c);
    if (!credential) return null;
    const actor = await resolveActor(c.get("db"), c.get("config"), credential);
    watchStanding(c, actor);
    c.set("actor", actor);
    return actor;
  } catch (err) {
    // A suspended account's key or token is refused even on a public read (a bad credential reads as anonymous).
    if (err instanceof ApiError && err.code === "ACCOUNT_SUSPENDED") throw err;
    return null;
  }
}

/** Authenticates the caller (any of the four credential kinds) and checks its kind; sets `c.var.actor`. */
export function auth(options: AuthOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const credential = readCredential(c);
    if (!credential) {
      if (options.optional) return next();
      throw new ApiError("UNAUTHORIZED", "Authentication required: send Authorization: Bearer <credential>");
    }
    // Already verified by the read limit on this request, or verified now (a bad credential throws its 401).
    const { evenSuspended } = options;
    const actor = c.get("actor") ?? (await resolveActor(c.get("db"), c.get("config"), credential, { evenSuspended }));
    if (options.types && !options.types.includes(actor.type)) {
      throw new ApiError("FORBIDDEN", `This endpoint is for ${options.types.join(" or ")} accounts`);
    }
    if (options.credentials && !options.credentials.includes(actor.credential)) {
      throw new ApiError("FORBIDDEN", `This endpoint needs a ${options.credentials.join(" or ")} credential`);
    }
    // The account as it is now (suspended, gone, logged out, its type changed) is checked with the first D1 trip.
    requireStanding(c, actor, { types: options.types, evenSuspended });
    c.set("actor", actor);
    return next();
  };
}

/** Who reads a public route, for what hidden content they may see (src/domain/shared/visibility.ts): the verified caller or null. */
export const viewerOfRequest = async (c: Context<AppEnv>): Promise<Viewer> => viewerOf(await verifiedActor(c));

/** The authenticated caller of a route behind `auth()`. */
export function actorOf(c: Context<AppEnv>): Actor {
  const actor = c.get("actor");
  if (!actor) throw new ApiError("UNAUTHORIZED", "Authentication required");
  return actor;
}
