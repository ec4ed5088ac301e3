import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { branches, stories } from "../db/schema";
import type { LengthRules } from "../domain/shared/length";
import { branchHeadQuery } from "../domain/stories/segments";
import type { Env } from "../env";
import { notFound } from "../lib/errors";
import type { TurnState } from "../turns/rules";
import { queueQuery, turnStateOf } from "../turns/store";

/** What the room keeps about its branch: where the next segment goes, the story's length rules, the turn. */
export interface Room {
  branchId: string;
  storyId: string;
  /** Who created the branch: only they (or an admin) may open it with a starter segment. */
  creatorId: string;
  /** sequence_order of the fork point: the branch has no segments of its own while nextSeq is just after it. */
  forkSequence: number;
  rules: LengthRules;
  nextSeq: number;
  lastSegmentId: string | null;
  /** join_seq of the latest member ever queued; join order is kept by increasing it. */
  joinSeq: number;
  turn: TurnState;
  /**
   * A moderator hid the branch or its story, as D1 said on load or `moderated` told since. Only a hint of when to
   * ask D1 (a restore tells no room): `refuseIfHidden` confirms it before refusing anything.
   */
  hidden: boolean;
}

/**
 * What the parts of the branch's object (`TurnChanges`, `TurnQueue`, `Submissions`) reach through `BranchRoom`.
 * Read at each use, never kept: `db` is the database of the call being served (its own metered session), and `env`
 * is the object's as it is at that moment.
 */
export interface RoomHost {
  readonly db: Db;
  readonly env: Env;
  /** Runs `fn`, dropping the room's cache if it fails in a way the room did not decide (see `BranchRoom.guarded`). */
  guarded<T>(fn: () => Promise<T>): Promise<T>;
}

/** What the room's writes go into: its branch, in its story (`takesWrites`). */
export const writeTarget = (room: Room) => ({ storyId: room.storyId, branchId: room.branchId });

/** The room as D1 holds it: the branch, its story's rules, its head and its queue, in one round trip (404: no such branch). */
export async function readRoom(db: Db, branchId: string): Promise<Room> {
  const [[row], [head], queued] = await db.batch([
    db
      .select({
        branch: branches,
        language: stories.language,
        minLength: stories.minLength,
        maxLength: stories.maxLength,
        // Named apart: in a batch D1 answers rows as objects, where two columns named `hidden_at` would be one.
        storyHiddenAt: sql<string | null>`${stories.hiddenAt}`.as("story_hidden_at"),
      })
      .from(branches)
      .innerJoin(stories, eq(stories.id, branches.storyId))
      .where(eq(branches.id, branchId))
      .limit(1),
    branchHeadQuery(db, branchId),
    queueQuery(db, branchId),
  ]);
  if (!row) throw notFound("Branch");
  const { branch, storyHiddenAt, ...rules } = row;
  return {
    branchId,
    storyId: branch.storyId,
    creatorId: branch.creatorId,
    forkSequence: branch.forkSequence,
    rules,
    nextSeq: (head?.sequenceOrder ?? branch.forkSequence) + 1,
    lastSegmentId: head?.id ?? branch.forkAtSegmentId,
    joinSeq: queued.at(-1)?.joinSeq ?? 0,
    turn: turnStateOf(branch, queued),
    hidden: branch.hiddenAt !== null || storyHiddenAt !== null,
  };
}
