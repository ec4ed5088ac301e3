import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { nowIso } from "../db/client";
import { pins, stories, type PinRow } from "../db/schema";
import { type Actor, requireOwnerOrAdmin } from "./actor";
import { notFound, storyArchived } from "../lib/errors";
import { type IdempotentRequest, commit, recordStatements } from "./idempotency";

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
  db.select().from(pins).where(and(sql`${pins.storyId} = ${storyId}`, eq(pins.isActive, true))).orderBy(...pinOrder);

/** Only the story's owner or an admin manages its pins. */
async function ownedStory(db: Db, actor: Actor, storyId: string) {
  const [story] = await db.select({ ownerId: stories.ownerId, status: stories.status }).from(stories).where(eq(stories.id, storyId)).limit(1);
  if (!story) throw notFound("Story");
  requireOwnerOrAdmin(actor, story.ownerId, "Only the story's owner or an admin may manage its pins");
  return story;
}

export async function createPin(db: Db, actor: Actor, storyId: string, input: { title: string; content: string; type: PinType; is_active: boolean }, idem?: IdempotentRequest) {
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
  await commit(() => db.batch([db.insert(pins).values(row), ...recordStatements(db, idem, { status: 201, data: created })]));
  return created;
}

export async function listPins(db: Db, storyId: string, { includeInactive }: { includeInactive: boolean }) {
  const [story, rows] = await db.batch([
    db.select({ id: stories.id }).from(stories).where(eq(stories.id, storyId)).limit(1),
    includeInactive
      ? db.select().from(pins).where(eq(pins.storyId, storyId)).orderBy(...pinOrder)
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
) {
  await ownedStory(db, actor, storyId);
  const [row] = await db
    .update(pins)
    .set({ title: patch.title, content: patch.content, type: patch.type, isActive: patch.is_active, updatedAt: nowIso() })
    .where(and(eq(pins.id, pinId), eq(pins.storyId, storyId)))
    .returning();
  if (!row) throw notFound("Pin");
  return pinView(row);
}
