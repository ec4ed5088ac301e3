import { asc, count, countDistinct, desc, gte, sql, type SQL } from "drizzle-orm";
import { type Db, rawAll } from "../../db/client";
import { bots, logAuthors, logs, stories, users } from "../../db/schema";
import { round3 } from "../../lib/round";
import { weightedTotal } from "../shared/scores";

const WEEK_MS = 7 * 86_400_000;
const TOP = 10;

interface StoryRef {
  id: string;
  title: string;
}

/** The story with the highest `score` (ties to the earlier-created), from one grouped query. */
const topStory = (db: Db, from: SQL, score: SQL) =>
  rawAll<StoryRef>(
    db,
    sql`SELECT st.id, st.title FROM ${from} JOIN stories st ON st.id = x.story_id AND st.hidden_at IS NULL
    GROUP BY x.story_id ORDER BY ${score} DESC, st.created_at ASC, st.id ASC LIMIT 1`,
  );

/**
 * Every figure is a SQL aggregate; the whole dashboard is one round trip. The last week's figures read the logs; the
 * all-time ones their counters (`stories.continuations_count`, `log_authors`), the logs being pruned after LOGS_KEEP_DAYS.
 */
export async function dashboardStats(db: Db, now = Date.now()) {
  const since = new Date(now - WEEK_MS).toISOString();
  const [[storyTotal], mostActive, mostUpvoted, mostContinued, [humans], [botTotal], activeByType, topCreators, topUpvoted] = await db.batch([
    db.select({ n: count() }).from(stories),
    topStory(db, sql`(SELECT story_id FROM logs WHERE created_at >= ${since}) x`, sql`count(*)`),
    topStory(
      db,
      sql`(SELECT story_id, target_type, target_id, vote, effective_weight FROM votes WHERE target_type IN ('branch', 'segment')) x`,
      weightedTotal("x"),
    ),
    rawAll<StoryRef>(
      db,
      sql`SELECT id, title FROM stories WHERE hidden_at IS NULL AND continuations_count > 0
        ORDER BY continuations_count DESC, created_at ASC, id ASC LIMIT 1`,
    ),
    db.select({ n: count() }).from(users),
    db.select({ n: count() }).from(bots),
    db
      .select({ type: logs.authorType, n: countDistinct(logs.authorId) })
      .from(logs)
      .where(gte(logs.createdAt, since))
      .groupBy(logs.authorType),
    db
      .select({ id: logAuthors.authorId, name: logAuthors.authorName, type: logAuthors.authorType, segments_count: logAuthors.entries })
      .from(logAuthors)
      .orderBy(desc(logAuthors.entries), asc(logAuthors.firstAt), asc(logAuthors.authorId))
      .limit(TOP),
    rawAll<{ id: string; name: string | null; type: string; vote_score: number }>(
      db,
      sql`
      SELECT v.target_author_id AS id, coalesce(u.username, b.name) AS name, v.target_author_type AS type,
        ${weightedTotal("v")} AS vote_score
      FROM votes v LEFT JOIN users u ON u.id = v.target_author_id LEFT JOIN bots b ON b.id = v.target_author_id
      WHERE v.target_type IN ('segment', 'rewrite')
      GROUP BY v.target_author_id ORDER BY vote_score DESC, min(v.created_at) ASC LIMIT ${TOP}`,
    ),
  ]);
  const active = (type: string) => activeByType.find((a) => a.type === type)?.n ?? 0;
  return {
    stories: {
      total: storyTotal.n,
      most_active: mostActive[0] ?? null,
      most_upvoted: mostUpvoted[0] ?? null,
      most_continued: mostContinued[0] ?? null,
    },
    authors: {
      total: humans.n + botTotal.n,
      human_total: humans.n,
      bot_total: botTotal.n,
      active_last_week_human: active("human"),
      active_last_week_bot: active("bot"),
      top_creators: topCreators,
      top_upvoted: topUpvoted.map((a) => ({ ...a, vote_score: round3(a.vote_score) })),
    },
  };
}
