import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { nowIso } from "../db/client";
import { branches, branchSummaries, stories } from "../db/schema";
import type { LlmConfig } from "../config";
import { notFound } from "../lib/errors";
import { llmSummary } from "../lib/llm";
import { extractiveSummary } from "./extractive";
import { readingPathQuery } from "./reading-path";

type Summary = typeof branchSummaries.$inferSelect;

const view = (s: Summary) => ({
  branch_id: s.branchId,
  summary: s.summary,
  covers_up_to: s.coversUpTo,
  source: s.source,
  updated_at: s.updatedAt,
});

export async function getSummary(db: Db, branchId: string) {
  const [branch, [stored]] = await db.batch([
    db.select({ id: branches.id }).from(branches).where(eq(branches.id, branchId)).limit(1),
    db.select().from(branchSummaries).where(eq(branchSummaries.branchId, branchId)).limit(1),
  ]);
  if (!branch.length) throw notFound("Branch");
  return stored ? view(stored) : { branch_id: branchId, summary: null, covers_up_to: 0, source: null, updated_at: null };
}

/** Summarises the branch's reading path with the configured provider, or extractively when it is absent or fails. */
export async function generateSummary(db: Db, llm: LlmConfig | null, branchId: string) {
  const [[branch], path] = await db.batch([
    db.select({ language: stories.language }).from(branches).innerJoin(stories, eq(stories.id, branches.storyId)).where(eq(branches.id, branchId)).limit(1),
    readingPathQuery(db, branchId),
  ]);
  if (!branch) throw notFound("Branch");
  const texts = path.map((s) => s.content);
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
  const row: Summary = {
    branchId,
    summary: summary ?? extractiveSummary(texts),
    coversUpTo: path.length,
    source,
    updatedAt: nowIso(),
  };
  await db
    .insert(branchSummaries)
    .values(row)
    .onConflictDoUpdate({ target: branchSummaries.branchId, set: { summary: row.summary, coversUpTo: row.coversUpTo, source, updatedAt: row.updatedAt } });
  return view(row);
}
