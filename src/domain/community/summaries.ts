import { and, eq, ne, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nowIso } from "../../db/client";
import { branches, branchSummaries, stories } from "../../db/schema";
import type { LlmConfig } from "../../config";
import { notFound } from "../../lib/errors";
import { llmSummary } from "../../lib/llm";
import { type Actor, ownsOrAdmin, requireOwnerOrAdmin } from "../shared/actor";
import { extractiveSummary } from "./extractive";
import { type Viewer, branchShown } from "../shared/visibility";
import { asPath, readingPathQuery } from "../stories/path";
import { takesWrites } from "../shared/writable";
import { rowWhere } from "../../db/whole-row";

type Summary = typeof branchSummaries.$inferSelect;

const view = (s: Summary) => ({
  branch_id: s.branchId,
  summary: s.summary,
  covers_up_to: s.coversUpTo,
  source: s.source,
  updated_at: s.updatedAt,
});

const storedSummary = (db: Db, branchId: string) => db.select().from(branchSummaries).where(eq(branchSummaries.branchId, branchId)).limit(1);

/**
 * The branch's story: its language (for the provider) and its owner (who may write or replace a summary by hand).
 * None for a hidden branch or story: a summary is written (generated or by hand) only of what anyone may read.
 */
const storyOf = (db: Db, branchId: string) =>
  db
    .select({ language: stories.language, ownerId: stories.ownerId })
    .from(branches)
    .innerJoin(stories, eq(stories.id, branches.storyId))
    .where(and(eq(branches.id, branchId), branchShown('"branches"', null)))
    .limit(1);

/** SQL: a summary of the branch may be stored: neither it nor its story is hidden (the write's own condition). */
const summaryTakesWrites = (branchId: string) =>
  takesWrites({ storyId: sql`(SELECT story_id FROM branches WHERE id = ${branchId})`, branchId }, { evenArchived: true });

/** The texts a summary is made of: the reading path as anyone reads it, without what a moderator hid. */
const summarisedTexts = (path: Parameters<typeof asPath>[0]) =>
  asPath(path)
    .filter((s) => !s.hidden)
    .map((s) => s.content);

/** The branch (a SQL expression selecting its id) unless a summary is stored for it: its path is read only then. */
const unlessStored = (branchId: string) => sql`(SELECT ${branchId} WHERE NOT EXISTS (SELECT 1 FROM branch_summaries WHERE branch_id = ${branchId}))`;

/**
 * The stored summary or, when none is, the extractive summary of the reading path as it is now (not
 * stored, no provider called; InkPath's clients read one there). One round trip: the path is read only when needed.
 */
export async function getSummary(db: Db, branchId: string, viewer: Viewer = null) {
  const [branch, [stored], path] = await db.batch([
    db
      .select({ id: branches.id })
      .from(branches)
      .where(and(eq(branches.id, branchId), branchShown('"branches"', viewer)))
      .limit(1),
    storedSummary(db, branchId),
    readingPathQuery(db, unlessStored(branchId)),
  ]);
  if (!branch.length) throw notFound("Branch");
  if (stored) return view(stored);
  return { branch_id: branchId, summary: extractiveSummary(summarisedTexts(path)), covers_up_to: path.length, source: "extractive" as const, updated_at: null };
}

/**
 * Summarises the branch's reading path with the configured provider, or extractively when it is absent or fails.
 * A summary written by hand stays unless the story's owner or an admin asks: anyone else gets it as it is.
 */
export async function generateSummary(db: Db, llm: LlmConfig | null, branchId: string, actor: Actor) {
  const [[branch], path, [stored]] = await db.batch([storyOf(db, branchId), readingPathQuery(db, branchId), storedSummary(db, branchId)]);
  if (!branch) throw notFound("Branch");
  const mayReplaceManual = ownsOrAdmin(actor, branch.ownerId);
  if (stored?.source === "manual" && !mayReplaceManual) return view(stored);
  const texts = summarisedTexts(path);
  let summary: string | null = null;
  let source: Summary["source"] = "extractive";
  if (llm) {
    try {
      summary = await llmSummary(llm, texts.join("\n\n"), branch.language);
      source = "llm";
    } catch (err) {
      console.warn(`summary provider failed, using the extractive summary: ${(err as Error).message}`);
    }
  }
  const row: Summary = { branchId, summary: summary ?? extractiveSummary(texts), coversUpTo: path.length, source, writtenBy: null, updatedAt: nowIso() };
  const saved = await db
    .insert(branchSummaries)
    .select(rowWhere(branchSummaries, row, summaryTakesWrites(branchId)))
    .onConflictDoUpdate({
      target: branchSummaries.branchId,
      set: { summary: row.summary, coversUpTo: row.coversUpTo, source, writtenBy: null, updatedAt: row.updatedAt },
      // Written by hand while the provider was busy: it stays, as above.
      setWhere: mayReplaceManual ? undefined : ne(branchSummaries.source, "manual"),
    })
    .returning({ branchId: branchSummaries.branchId });
  return saved.length ? view(row) : getSummary(db, branchId);
}

/**
 * The generated summaries that may quote a segment of `storyId`'s reading paths: deleted in a hide's batch, so no
 * stored summary keeps hidden text (the next `POST …/summary` makes a new one; summaries written by hand stay).
 */
export const forgetGeneratedSummaries = (db: Db, storyId: string) =>
  db
    .delete(branchSummaries)
    .where(and(ne(branchSummaries.source, "manual"), sql`${branchSummaries.branchId} IN (SELECT id FROM branches WHERE story_id = ${storyId})`));

/**
 * The story's owner (or an admin) writes the branch's summary by hand; it covers the reading path as it is now,
 * and `GET …/summary` serves it until its owner or an admin asks for a regeneration.
 */
export async function writeSummary(db: Db, actor: Actor, branchId: string, text: string) {
  const [[branch], [last]] = await db.batch([storyOf(db, branchId), readingPathQuery(db, branchId, 1)]);
  if (!branch) throw notFound("Branch");
  requireOwnerOrAdmin(actor, branch.ownerId, "Only the story's owner or an admin may write a branch's summary");
  // Sequence numbers run 1, 2, 3 … along a reading path, so the last one is its length.
  const row: Summary = { branchId, summary: text, coversUpTo: last?.sequence_order ?? 0, source: "manual", writtenBy: actor.id, updatedAt: nowIso() };
  const { branchId: _id, ...changes } = row;
  const saved = await db
    .insert(branchSummaries)
    .select(rowWhere(branchSummaries, row, summaryTakesWrites(branchId)))
    .onConflictDoUpdate({ target: branchSummaries.branchId, set: changes })
    .returning({ branchId: branchSummaries.branchId });
  if (!saved.length) throw notFound("Branch"); // hidden since our read
  return view(row);
}
