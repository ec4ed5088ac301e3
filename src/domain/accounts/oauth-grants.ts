import { type SQL, and, desc, eq, getTableColumns, isNull, ne, sql } from "drizzle-orm";
import { type Db, nowIso } from "../../db/client";
import { type BotRow, type OAuthGrantRow, bots, oauthGrants } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { underBotCap } from "./bot-cap";

/**
 * The apps people connected through OAuth, as D1 knows them: written when the person approves (before
 * the code is sent, with the bot made for it if any), listed on "Connected apps", revoked there (the standing statement then refuses the grant's
 * next call), and ended with the bot they act as when it is retired. The tokens themselves are the OAuth library's.
 */

/**
 * What a grant stores (encrypted by the library): whom every call through it is, and who approved it. The grant's
 * id is the token's middle part (`userId:grantId:secret`).
 */
export interface GrantProps {
  actorId: string;
  actorType: "human" | "admin" | "bot";
  actorName: string;
  personId: string;
  clientName: string;
}

export type NewGrant = Omit<OAuthGrantRow, "lastUsedAt" | "revokedAt">;

/** A client id that is a URL is a Client ID Metadata Document's: one id for every installation of the app. */
const isCimd = (clientId: string) => clientId.startsWith("https://");

/**
 * Records an approved grant in one batch: the bot it acts as when that was made on the consent page (`made`: its
 * row is written only with its grant), the grant, and the grants it replaces, ended: the same identity's earlier
 * grants for the same client (for a CIMD client, with the same redirect URI too), as the library would replace
 * them. Answers the ended grants' ids, for the library to delete their tokens once D1 has them ended.
 */
export async function recordGrant(db: Db, grant: NewGrant, made?: { bot: BotRow; cap: number }): Promise<string[]> {
  const replaced = and(
    eq(oauthGrants.actorId, grant.actorId),
    eq(oauthGrants.clientId, grant.clientId),
    isNull(oauthGrants.revokedAt),
    ne(oauthGrants.id, grant.id),
    isCimd(grant.clientId) ? eq(oauthGrants.redirectUri, grant.redirectUri) : undefined,
  );
  const statements = [
    ...(made ? [underBotCap(db, grant.personId, made.cap), db.insert(bots).values(made.bot)] : []),
    db.insert(oauthGrants).values(grant),
    db.update(oauthGrants).set({ revokedAt: grant.createdAt }).where(replaced).returning({ id: oauthGrants.id }),
  ];
  const results = await db.batch(statements as [(typeof statements)[number]]);
  return (results.at(-1) as { id: string }[]).map((r) => r.id);
}

/** The person's connected apps (those they approved) with the name of whom each acts as, newest first; revoked ones are not shown. */
export const listGrants = (db: Db, personId: string) =>
  db
    .select({
      ...getTableColumns(oauthGrants),
      actorName: sql<string>`COALESCE((SELECT name FROM bots WHERE id = ${oauthGrants.actorId}), (SELECT username FROM users WHERE id = ${oauthGrants.actorId}), '')`,
    })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.personId, personId), isNull(oauthGrants.revokedAt)))
    .orderBy(desc(oauthGrants.createdAt));

/** Revokes one of the person's grants (404 for anyone else's): refused from its next call on. */
export async function revokeGrant(db: Db, personId: string, grantId: string): Promise<OAuthGrantRow> {
  const [row] = await db
    .update(oauthGrants)
    .set({ revokedAt: nowIso() })
    .where(and(eq(oauthGrants.id, grantId), eq(oauthGrants.personId, personId), isNull(oauthGrants.revokedAt)))
    .returning();
  if (!row) throw notFound("Connected app");
  return row;
}

/**
 * Ends every grant acting as the bot (its retirement), as a statement of the retiring batch: only while `retiring`
 * holds (its condition). Answers the grants it ended, for the library to end them in its store too.
 */
export const endGrantsOf = (db: Db, botId: string, at: string, retiring: SQL) =>
  db
    .update(oauthGrants)
    .set({ revokedAt: at })
    .where(and(eq(oauthGrants.actorId, botId), isNull(oauthGrants.revokedAt), retiring))
    .returning({ id: oauthGrants.id, actorId: oauthGrants.actorId });

/** "Last used" (a background write, src/oauth/use.ts). */
export async function markGrantUsed(d1: D1Database, grantId: string, at: string) {
  await d1.prepare("UPDATE oauth_grants SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)").bind(at, grantId, at).run();
}

/** Ends a grant whatever its person (a refresh token presented again after its rotation: the grant has leaked). */
export async function endGrant(d1: D1Database, grantId: string, at: string) {
  await d1.prepare("UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").bind(at, grantId).run();
}
