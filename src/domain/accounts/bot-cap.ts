import { sql } from "drizzle-orm";
import { type Db, abortUnless, rawAll } from "../../db/client";
import { ApiError } from "../../lib/errors";

/**
 * Bots one person may own at once (`LIMIT_BOTS_PER_OWNER`; retired ones do not count): each bot is an account with
 * limits of its own, so without a cap one sign-up would be any number of accounts. Checked where a bot with an
 * owner is made: "My bots", `POST /auth/bot/register` with a person's credential, and the consent page's new bot.
 */

/** The owner's bots that count against the cap: every one not retired. */
const liveBotsOf = (ownerId: string) => sql`(SELECT COUNT(*) FROM bots WHERE owner_id = ${ownerId} AND status <> 'retired')`;

/** A statement that aborts the batch it leads (a new bot's) unless the owner has fewer than `cap` live bots. */
export const underBotCap = (db: Db, ownerId: string, cap: number) => rawAll(db, abortUnless(sql`${liveBotsOf(ownerId)} < ${cap}`, "bot cap reached"));

/** The cap, in words and numbers (409, as the other per-account caps answer). */
export const botCapReached = (cap: number, held: number) =>
  new ApiError("CONFLICT", `You have ${held} bots, the most one person may have at once (${cap}): retire one first`, {
    reason: "bot_limit",
    limit: cap,
    bots: held,
  });

/** Refuses a new bot before anything is spent (the consent page's handle): 409 when the owner is at the cap. */
export async function checkBotCap(db: Db, ownerId: string, cap: number) {
  const [row] = await db.all<{ held: number }>(sql`SELECT ${liveBotsOf(ownerId)} AS held`);
  if ((row?.held ?? 0) >= cap) throw botCapReached(cap, row?.held ?? 0);
}
