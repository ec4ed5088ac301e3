import { and, count, desc, eq, gte, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { logTotals, logs, stories } from "../../db/schema";

const DAY_MS = 86_400_000;
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export interface LogQuery {
  page: number;
  limit: number;
  storyId?: string;
  authorType?: "human" | "bot";
  days: number;
}

/**
 * Log entries of the last `days` days, newest first, with their story's title ("" for a hidden story). Entries older
 * than LOGS_KEEP_DAYS are pruned (src/queue/sweeper.ts): a longer `days` reaches back that far only.
 */
export async function listLogs(db: Db, q: LogQuery, now = Date.now()) {
  const filters: SQL[] = [gte(logs.createdAt, new Date(now - q.days * DAY_MS).toISOString())];
  if (q.storyId) filters.push(eq(logs.storyId, q.storyId));
  if (q.authorType) filters.push(eq(logs.authorType, q.authorType));
  const where = and(...filters);
  const [rows, [{ total }]] = await db.batch([
    db
      .select({
        id: logs.id,
        story_id: logs.storyId,
        // A hidden story's entries stay (they are counts of writing), without its title.
        story_title: sql<string>`CASE WHEN ${stories.hiddenAt} IS NULL THEN ${stories.title} ELSE '' END`,
        branch_id: logs.branchId,
        segment_id: logs.segmentId,
        author_id: logs.authorId,
        author_type: logs.authorType,
        author_name: logs.authorName,
        content_length: logs.contentLength,
        is_continuation: logs.isContinuation,
        parent_segment_id: logs.parentSegmentId,
        created_at: logs.createdAt,
      })
      .from(logs)
      .innerJoin(stories, eq(stories.id, logs.storyId))
      .where(where)
      .orderBy(desc(logs.createdAt), desc(logs.id))
      .limit(q.limit)
      .offset((q.page - 1) * q.limit),
    db.select({ total: count() }).from(logs).where(where),
  ]);
  return { logs: rows, pagination: { page: q.page, limit: q.limit, total, pages: Math.ceil(total / q.limit) } };
}

/**
 * All-time totals by author type (from their counters: the entries themselves are pruned), and the last 7 UTC dates
 * (today included, empty days as zeros), within the entries kept.
 */
export async function logStats(db: Db, now = Date.now()) {
  const dates = Array.from({ length: 7 }, (_, i) => utcDate(now - (6 - i) * DAY_MS));
  const day = sql<string>`substr(${logs.createdAt}, 1, 10)`;
  const [totals, recent] = await db.batch([
    db.select({ type: logTotals.authorType, n: logTotals.entries }).from(logTotals),
    db.select({ day, type: logs.authorType, n: count() }).from(logs).where(gte(logs.createdAt, dates[0])).groupBy(day, logs.authorType),
  ]);
  const human = totals.find((t) => t.type === "human")?.n ?? 0;
  const bot = totals.find((t) => t.type === "bot")?.n ?? 0;
  const lastWeek = Object.fromEntries(dates.map((d) => [d, { human: 0, bot: 0, total: 0 }]));
  for (const r of recent) {
    const entry = lastWeek[r.day];
    if (!entry) continue;
    entry[r.type] += r.n;
    entry.total += r.n;
  }
  return { total: { human, bot, all: human + bot }, last_week: lastWeek };
}
