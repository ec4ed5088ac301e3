import { eq, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll } from "../../db/client";
import { feedTokens } from "../../db/schema";
import { randomSecret, sha256Hex } from "../../lib/crypto";
import { ApiError } from "../../lib/errors";
import { FEED_TOKEN_PREFIX } from "../../lib/feed-paths";
import { refuseIfSuspended } from "../standing/rule";
import { itemView, latestItemsQuery } from "./inbox";

/**
 * The private inbox feed: an account's inbox as Atom, at an address whose last part is a token, so a
 * feed reader (which sends no credential) can follow it. One token per account, stored hashed as the API's tokens
 * are; minting another replaces it, revoking deletes it: the old address stops answering at once.
 */

/** A new token for the account, replacing any earlier one in the same statement; the token is answered once. */
export async function mintFeedToken(db: Db, accountId: string) {
  const token = randomSecret(FEED_TOKEN_PREFIX);
  const createdAt = nowIso();
  const tokenHash = await sha256Hex(token);
  await db.insert(feedTokens).values({ accountId, tokenHash, createdAt }).onConflictDoUpdate({ target: feedTokens.accountId, set: { tokenHash, createdAt } });
  return { token, createdAt };
}

/** Revokes the account's token; `revoked` is false when it had none (revoking twice is no error). */
export async function revokeFeedToken(db: Db, accountId: string) {
  const result = await db.delete(feedTokens).where(eq(feedTokens.accountId, accountId));
  return { revoked: result.meta.changes > 0 };
}

/** When the account's token was minted (no row: it has none): a query for a page's batch. */
export const feedTokenQuery = (db: Db, accountId: string) =>
  db.select({ created_at: feedTokens.createdAt }).from(feedTokens).where(eq(feedTokens.accountId, accountId)).limit(1);

interface TokenAccount {
  since: string;
  /** Null when the token's account is gone (or a bot retired). */
  id: string | null;
  name: string;
  suspended_at: string | null;
  suspended_until: string | null;
  suspension_reason: string | null;
  owner_suspended_at: string | null;
  owner_suspended_until: string | null;
}

/**
 * The token's account with its standing (a human's, or a live bot's with its owner's suspension), read as a key's or
 * token's own look-up reads it (src/domain/accounts/auth.ts). Raw SQL with a name for each column: a batch's rows are objects,
 * where the two accounts' tables' columns of one name would be one key.
 */
const tokenAccountQuery = (db: Db, tokenHash: string) =>
  rawAll<TokenAccount>(
    db,
    sql`SELECT t.created_at AS since, coalesce(u.id, b.id) AS id, coalesce(u.username, b.name) AS name,
        coalesce(u.suspended_at, b.suspended_at) AS suspended_at, coalesce(u.suspended_until, b.suspended_until) AS suspended_until,
        coalesce(u.suspension_reason, b.suspension_reason) AS suspension_reason,
        o.suspended_at AS owner_suspended_at, o.suspended_until AS owner_suspended_until
      FROM feed_tokens t LEFT JOIN users u ON u.id = t.account_id LEFT JOIN bots b ON b.id = t.account_id AND b.status <> 'retired'
        LEFT JOIN users o ON o.id = b.owner_id
      WHERE t.token_hash = ${tokenHash}`,
  );

/**
 * The newest `limit` items of the token's account's inbox: one round trip (the token's account and its standing, and
 * the items of whoever the token names). Their text is what anonymous readers may read (a hidden item's is ""): the
 * address is a bearer secret that feed readers keep, and it must show no more than the account's public pages would.
 * Refused as any credential is: 401 when the token names nobody (never minted, replaced, revoked, or its account
 * gone), 403 ACCOUNT_SUSPENDED while the account (or a bot's owner) is suspended.
 */
export async function inboxFeed(db: Db, token: string, limit: number) {
  const tokenHash = await sha256Hex(token);
  const account = sql`(SELECT account_id FROM feed_tokens WHERE token_hash = ${tokenHash})`;
  const [[row], items] = await db.batch([tokenAccountQuery(db, tokenHash), latestItemsQuery(db, account, null, limit)]);
  if (!row?.id) throw new ApiError("UNAUTHORIZED", "This feed's address is not valid: it was revoked or replaced, or its account is gone");
  refuseIfSuspended({
    suspendedAt: row.suspended_at,
    suspendedUntil: row.suspended_until,
    suspensionReason: row.suspension_reason,
    ownerSuspendedAt: row.owner_suspended_at,
    ownerSuspendedUntil: row.owner_suspended_until,
  });
  return { account: { id: row.id, name: row.name }, since: row.since, items: items.map(itemView) };
}
