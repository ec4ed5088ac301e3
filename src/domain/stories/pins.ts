import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { type Viewer, storyShown } from "../shared/visibility";
import { type Db, rawRun } from "../../db/client";
import { nowIso } from "../../db/client";
import { pins, stories, type PinRow } from "../../db/schema";
import { type Actor, requireOwnerOrAdmin } from "../shared/actor";
import { notFound, storyArchived, validationError } from "../../lib/errors";
import { type IdempotentRequest, commit, recordStatements } from "../shared/idempotency";
import { closedError, takesWrites } from "../shared/writable";

export type PinType = "announcement" | "rule" | "context";

export function pinView(p: PinRow) {
  return {
    id: p.id,
    story_id: p.storyId,
    title: p.title,
    content: p.content,
    type: p.type,
    is_active: p.isActive,
    created_by: p.createdBy,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

/** Pins oldest first. */
const pinOrder = [asc(pins.createdAt), asc(pins.id)];

/** A story's active pins, oldest first: usable inside `db.batch()`; `storyId` may be a SQL expression. */
export const activePinsQuery = (db: Db, storyId: string | SQL) =>
  db
    .select()
    .from(pins)
    .where(and(sql`${pins.storyId} = ${storyId}`, eq(pins.isActive, true)))
    .orderBy(...pinOrder);

/** Only the story's owner or an admin manages its pins. */
async function ownedStory(db: Db, actor: Actor, storyId: string) {
  const [story] = await db.select({ ownerId: stories.ownerId, status: stories.status }).from(stories).where(eq(stories.id, storyId)).limit(1);
  if (!story) throw notFound("Story");
  requireOwnerOrAdmin(actor, story.ownerId, "Only the story's owner or an admin may manage its pins");
  return story;
}

/** Fewer than `cap` active pins on the story: the condition of every write that makes a pin active. */
const belowCap = (storyId: string, cap: number) => sql`(SELECT count(*) FROM pins WHERE story_id = ${storyId} AND is_active = 1) < ${cap}`;

const capReached = (cap: number) => validationError([{ field: "is_active", issue: `a story has at most ${cap} active pins; deactivate one first` }]);

export async function createPin(
  db: Db,
  actor: Actor,
  storyId: string,
  input: { title: string; content: string; type: PinType; is_active: boolean },
  { activePinCap, idempotency }: { activePinCap: number; idempotency?: IdempotentRequest },
) {
  const story = await ownedStory(db, actor, storyId);
  if (story.status !== "active") throw storyArchived();
  const now = nowIso();
  const row: PinRow = {
    id: crypto.randomUUID(),
    storyId,
    title: input.title,
    content: input.content,
    type: input.type,
    isActive: input.is_active,
    createdBy: actor.id,
    createdAt: now,
    updatedAt: now,
  };
  const created = pinView(row);
  const inserted = sql`AND EXISTS (SELECT 1 FROM pins WHERE id = ${row.id})`;
  const [written] = await commit(() =>
    db.batch([
      rawRun(
        db,
        sql`INSERT INTO pins (id, story_id, title, content, type, is_active, created_by, created_at, updated_at)
        SELECT ${row.id}, ${storyId}, ${row.title}, ${row.content}, ${row.type}, ${row.isActive ? 1 : 0}, ${row.createdBy}, ${now}, ${now}
        WHERE ${takesWrites({ storyId })} AND ${row.isActive ? belowCap(storyId, activePinCap) : sql`1`}`,
      ),
      ...recordStatements(db, idempotency, { status: 201, data: created }, inserted),
    ]),
  );
  if (written.meta.changes !== 1) throw (await closedError(db, { storyId })) ?? capReached(activePinCap);
  return created;
}

/** A story's pins (404 when the story is hidden from the viewer). */
export async function listPins(db: Db, storyId: string, { includeInactive }: { includeInactive: boolean }, viewer: Viewer = null) {
  const [story, rows] = await db.batch([
    db
      .select({ id: stories.id })
      .from(stories)
      .where(and(eq(stories.id, storyId), storyShown('"stories"', viewer)))
      .limit(1),
    includeInactive
      ? db
          .select()
          .from(pins)
          .where(eq(pins.storyId, storyId))
          .orderBy(...pinOrder)
      : activePinsQuery(db, storyId),
  ]);
  if (!story.length) throw notFound("Story");
  return { pins: rows.map(pinView), count: rows.length };
}

export async function updatePin(
  db: Db,
  actor: Actor,
  storyId: string,
  pinId: string,
  patch: Partial<{ title: string; content: string; type: PinType; is_active: boolean }>,
  { activePinCap }: { activePinCap: number },
) {
  await ownedStory(db, actor, storyId);
  // Making a pin active (again) must leave the story within its cap; an active pin stays active freely.
  const activating = patch.is_active ? sql`(is_active = 1 OR ${belowCap(storyId, activePinCap)})` : undefined;
  const [row] = await db
    .update(pins)
    .set({ title: patch.title, content: patch.content, type: patch.type, isActive: patch.is_active, updatedAt: nowIso() })
    .where(and(eq(pins.id, pinId), eq(pins.storyId, storyId), activating))
    .returning();
  if (row) return pinView(row);
  const [exists] = await db
    .select({ id: pins.id })
    .from(pins)
    .where(and(eq(pins.id, pinId), eq(pins.storyId, storyId)))
    .limit(1);
  throw exists ? capReached(activePinCap) : notFound("Pin");
}
