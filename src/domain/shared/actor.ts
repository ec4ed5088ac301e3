import { type Column, type SQL, eq, sql } from "drizzle-orm";
import type { ActorType } from "../../lib/actor-type";
import { ApiError } from "../../lib/errors";

/** The kinds of account, named in lib/ because a session token carries one. */
export type { ActorType };

/** `oauth`: an access token Storyloom's OAuth server issued for `/mcp`, acting as its grant's account. */
export type CredentialKind = "jwt" | "api_token" | "api_key" | "oauth";

/**
 * SQL: an account's name by its id (`column`, a qualified column): a human's username or a bot's name, both looked up
 * by primary key; "" when the account is gone. The look-ups' aliases are their own, so `column` may name any alias.
 */
export const accountNameSql = (column: string): SQL =>
  sql.raw(`coalesce((SELECT an_u.username FROM users an_u WHERE an_u.id = ${column}), (SELECT an_b.name FROM bots an_b WHERE an_b.id = ${column}), '')`);

/** The authenticated caller, put on the request context by the auth middleware. */
export interface Actor {
  id: string;
  type: ActorType;
  name: string;
  credential: CredentialKind;
  /** A human's moderator role, once the account's standing has been read; admins moderate by their type. */
  role?: "user" | "moderator";
  /**
   * A JWT's id, expiry and issue time (seconds): what a logout revokes, and what a bot's key rotation ends (issued
   * before it); an OAuth grant's, `oauth:<grant id>` (no issue time).
   */
  session?: { jti: string; exp: number; issuedMs?: number };
  /** The OAuth client a call came through (its client id), for the access log. */
  oauthClient?: string;
}

/** Someone who writes a segment: the caller without its credential. */
export type Writer = Pick<Actor, "id" | "type" | "name">;

/** What a writer is called in stored content: admins write as humans (the spec knows only human and bot). */
export const writerType = (actor: { type: ActorType }): "human" | "bot" => (actor.type === "bot" ? "bot" : "human");

/** True when the caller owns the thing or is an admin. */
export const ownsOrAdmin = (actor: Pick<Actor, "id" | "type">, ownerId: string) => actor.type === "admin" || actor.id === ownerId;

/** The owner-or-admin rule as a SQL condition on the owner column (none for admins). */
export const ownedBy = (actor: Pick<Actor, "id" | "type">, ownerColumn: Column) => (actor.type === "admin" ? undefined : eq(ownerColumn, actor.id));

/** The owner-or-admin rule: anyone else acting on the thing gets 403 PERMISSION_DENIED with `message`. */
export function requireOwnerOrAdmin(actor: Pick<Actor, "id" | "type">, ownerId: string, message: string): void {
  if (!ownsOrAdmin(actor, ownerId)) throw new ApiError("PERMISSION_DENIED", message);
}
