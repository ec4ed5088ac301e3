import type { Context, MiddlewareHandler } from "hono";
import { getDb } from "../db/client";
import { API_TOKEN_PREFIX, BOT_KEY_PREFIX, actorForApiToken, actorForBotKey } from "../domain/auth";
import type { Actor, ActorType, AppEnv, CredentialKind, Env } from "../env";
import { ApiError } from "./errors";
import { signJwt, verifyJwt } from "./jwt";

function readCredential(c: Context<AppEnv>): string | null {
  const header = c.req.header("authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
    if (!match) throw new ApiError("UNAUTHORIZED", 'Authorization header must be "Bearer <credential>"');
    return match[1];
  }
  return c.req.header("x-api-key")?.trim() || null;
}

/** Turns any of the four credential kinds into the caller: JWTs need no D1 look-up, keys and tokens one. */
export async function resolveActor(env: Env, credential: string): Promise<Actor> {
  if (credential.startsWith(BOT_KEY_PREFIX)) return actorForBotKey(getDb(env.DB), credential);
  if (credential.startsWith(API_TOKEN_PREFIX)) return actorForApiToken(getDb(env.DB), credential);
  const claims = await verifyJwt(credential, env.JWT_SECRET);
  return { id: claims.sub, type: claims.typ, name: claims.name, credential: "jwt" };
}

interface AuthOptions {
  /** Caller types allowed; others get 403 FORBIDDEN. */
  types?: ActorType[];
  /** Credential kinds allowed; others get 403 FORBIDDEN. */
  credentials?: CredentialKind[];
  /** When true a missing credential is allowed (a present but bad one is still refused). */
  optional?: boolean;
}

export function auth(options: AuthOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const credential = readCredential(c);
    if (!credential) {
      if (options.optional) return next();
      throw new ApiError("UNAUTHORIZED", "Authentication required: send Authorization: Bearer <credential>");
    }
    const actor = await resolveActor(c.env, credential);
    if (options.types && !options.types.includes(actor.type)) {
      throw new ApiError("FORBIDDEN", `This endpoint is for ${options.types.join(" or ")} accounts`);
    }
    if (options.credentials && !options.credentials.includes(actor.credential)) {
      throw new ApiError("FORBIDDEN", `This endpoint needs a ${options.credentials.join(" or ")} credential`);
    }
    c.set("actor", actor);
    return next();
  };
}

/** The authenticated caller of a route behind `auth()`. */
export function actorOf(c: Context<AppEnv>): Actor {
  const actor = c.get("actor");
  if (!actor) throw new ApiError("UNAUTHORIZED", "Authentication required");
  return actor;
}

/** Signs the access token (HS256 JWT) returned by every login. */
export function issueAccessToken(env: Env, subject: { id: string; type: ActorType; name: string }) {
  return signJwt(subject, env.JWT_SECRET, Number(env.JWT_TTL_SECONDS ?? 86_400));
}
