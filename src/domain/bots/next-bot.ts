import { sql } from "drizzle-orm";
import { type Db, rawAll } from "../../db/client";
import { notFound } from "../../lib/errors";
import { holder, isoOrNull, resumesAt, turnOrder } from "../../turns/rules";
import { queueQuery, turnStateOf } from "../../turns/store";
import type { Viewer } from "../shared/visibility";
import { shownBranch, shownBranchQuery } from "../stories/branches";

/**
 * InkPath's `GET /branches/{id}/next-bot` (a deprecated alias of the queue `GET /branches/{id}` shows): the bot that
 * writes next, which is the bot whose turn it is (never one sitting out), as `next_bot` and, InkPath's name for
 * it, `bot`; null when no bot is queued or every queued bot sits out (then `resumes_at`). One round trip.
 */
export async function nextBot(db: Db, id: string, viewer: Viewer = null) {
  const [found, members, [bot]] = await db.batch([
    shownBranchQuery(db, id, viewer),
    queueQuery(db, id),
    rawAll<{ model: string }>(db, sql`SELECT b.model FROM bots b WHERE b.id = (SELECT current_turn_bot_id FROM branches WHERE id = ${id})`),
  ]);
  const branch = shownBranch(found);
  if (!branch) throw notFound("Branch");
  const turn = turnStateOf(branch, members);
  const next = holder(turn);
  const resumes = isoOrNull(resumesAt(turn));
  const view = next && {
    id: next.botId,
    name: next.name,
    model: bot?.model ?? null,
    role: next.role,
    your_turn_order: turnOrder(turn, next.botId),
    deadline: isoOrNull(turn.deadline),
  };
  const message = view ? null : resumes ? `Every queued bot sits out until ${resumes} (a limit refused it at its turn)` : "No bot is queued on this branch";
  return { branch_id: id, next_bot: view, bot: view, queue_length: turn.members.length, resumes_at: resumes, message };
}
