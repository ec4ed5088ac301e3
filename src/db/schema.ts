import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { type ContentWarning, RATINGS } from "../config";

// Timestamps are ISO 8601 UTC strings ("2026-01-02T03:04:05.678Z"): they sort as text and are returned as stored.

/**
 * An account's standing: suspended from `suspended_at` until `suspended_until` (null: until restored).
 * Checked on every request by src/domain/standing/rule.ts.
 */
const suspension = () => ({
  suspendedAt: text("suspended_at"),
  suspendedUntil: text("suspended_until"),
  suspensionReason: text("suspension_reason"),
});

/** A new account's standing columns: in good standing. */
export const inGoodStanding = { suspendedAt: null, suspendedUntil: null, suspensionReason: null } as const;

/** A moderator's hide: the item keeps its place, its text leaves every public read. Null: visible. */
/** A new item's hiding columns: visible. */
export const visible = { hiddenAt: null, hiddenBy: null, hiddenReason: null } as const;

const hiding = () => ({
  hiddenAt: text("hidden_at"),
  hiddenBy: text("hidden_by"),
  hiddenReason: text("hidden_reason"),
});

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    /** The username's uniqueness key (src/lib/names.ts): NFKC with full case folding. */
    usernameKey: text("username_key"),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    userType: text("user_type", { enum: ["human", "admin"] })
      .notNull()
      .default("human"),
    /** A human an admin made a moderator (admins moderate by their type). */
    role: text("role", { enum: ["user", "moderator"] })
      .notNull()
      .default("user"),
    ...suspension(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("users_username_key_unique").on(t.usernameKey),
    uniqueIndex("users_email_lower_unique").on(sql`lower(${t.email})`),
    // Search asks which accounts are suspended now (their text is found by nobody): the few rows that ever were.
    index("users_suspended_idx").on(t.suspendedAt).where(sql`suspended_at IS NOT NULL`),
  ],
);

export const bots = sqliteTable(
  "bots",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** The name's uniqueness key (src/lib/names.ts): NFKC with full case folding. */
    nameKey: text("name_key"),
    model: text("model").notNull(),
    /** `active`, or `retired` by its owner: its credentials and grants stop, its segments stay. */
    status: text("status").notNull().default("active"),
    /** The human who created it with their credential; null: an unowned bot, registered without one. */
    ownerId: text("owner_id"),
    role: text("role", { enum: ["narrator", "challenger", "voice"] }),
    language: text("language").notNull().default("zh"),
    webhookUrl: text("webhook_url"),
    webhookSecret: text("webhook_secret").notNull(),
    apiKeyHash: text("api_key_hash").notNull(),
    /** When its key was last replaced (rotated, or retired): a bot JWT issued before then is refused (src/domain/standing/rule.ts). */
    keyRotatedAt: text("key_rotated_at"),
    ...suspension(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("bots_name_key_unique").on(t.nameKey),
    uniqueIndex("bots_api_key_hash_unique").on(t.apiKeyHash),
    index("bots_owner_idx").on(t.ownerId),
    index("bots_suspended_idx").on(t.suspendedAt).where(sql`suspended_at IS NOT NULL`),
  ],
);

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    expiresAt: text("expires_at").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("api_tokens_token_hash_unique").on(t.tokenHash), index("api_tokens_user_idx").on(t.userId)],
);

export type UserRow = typeof users.$inferSelect;
export type BotRow = typeof bots.$inferSelect;

export const stories = sqliteTable(
  "stories",
  {
    id: text("id").primaryKey(),
    title: text("title").notNull(),
    background: text("background").notNull(),
    starter: text("starter").notNull(),
    styleRules: text("style_rules"),
    language: text("language").notNull().default("zh"),
    minLength: integer("min_length").notNull(),
    maxLength: integer("max_length").notNull(),
    ownerId: text("owner_id").notNull(),
    ownerType: text("owner_type", { enum: ["human", "bot"] }).notNull(),
    status: text("status", { enum: ["active", "archived"] })
      .notNull()
      .default("active"),
    storyPack: text("story_pack", { mode: "json" }),
    /** A content rating: `general`, `teen` or `mature` (src/config.ts). */
    rating: text("rating", { enum: RATINGS }).notNull().default("general"),
    /** Content warnings from the fixed list (src/config.ts), in the list's order, as a JSON array. */
    warnings: text("warnings", { mode: "json" }).$type<ContentWarning[]>().notNull().default([]),
    /** Every segment written on the story, and those by bots (authorship, src/domain/shared/authorship.ts); hides change neither. */
    segmentsCount: integer("segments_count").notNull().default(0),
    botSegmentsCount: integer("bot_segments_count").notNull().default(0),
    /**
     * Its `continuation` segments (a log entry's kind), bumped in each write's batch: the dashboard's most continued
     * story over all time, which the logs (pruned after LOGS_KEEP_DAYS) no longer hold.
     */
    continuationsCount: integer("continuations_count").notNull().default(0),
    ...hiding(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /**
     * The story in its search shard (src/domain/discovery/search-sync.ts): every change search shows (its text,
     * labels, hides, a branch, a segment) bumps `search_version` in its own batch and sets `search_dirty_at` when it
     * was clear; a sync copies the story to its shard and sets `search_synced` to the version it copied, `search_upto`
     * to the last segment rowid copied. Dirty: `search_version > search_synced`.
     */
    searchVersion: integer("search_version").notNull().default(1),
    searchSynced: integer("search_synced").notNull().default(0),
    searchUpto: integer("search_upto").notNull().default(0),
    searchDirtyAt: text("search_dirty_at"),
  },
  (t) => [
    index("stories_status_created_idx").on(t.status, t.createdAt),
    index("stories_owner_idx").on(t.ownerId),
    // The dashboard's most continued story from the index's head, not a scan of every story.
    index("stories_continued_idx").on(sql`${t.continuationsCount} DESC`, t.createdAt, t.id).where(sql`continuations_count > 0`),
    // The sweeper's stories whose sync is overdue (a hand-over lost), a few rows at a time.
    index("stories_search_dirty_idx").on(t.searchDirtyAt).where(sql`search_dirty_at IS NOT NULL`),
  ],
);

/**
 * The move of a deployment's search index out of D1 (migrations/0023): stories up to `legacy_max` (by rowid) were
 * indexed in D1's own FTS tables; the move copies them to their shards in rowid order, and `watermark` is the first
 * not yet moved. A legacy story below the watermark, and every later story, is searched in its shard; one from the
 * watermark to `legacy_max` in D1. One row.
 */
export const searchMove = sqliteTable("search_move", {
  id: integer("id").primaryKey(),
  legacyMax: integer("legacy_max").notNull(),
  watermark: integer("watermark").notNull(),
});

/**
 * A tag by its key (src/lib/tag-rule.ts: NFKC, case-folded, white space collapsed), with the first spelling
 * any story gave it: what tag pages and suggestions show. Never deleted (a tag no listed story carries is not suggested).
 */
export const tags = sqliteTable("tags", {
  key: text("key").primaryKey(),
  name: text("name").notNull(),
  createdAt: text("created_at").notNull(),
});

/** A story's tags, in the order its owner gave them, each with the spelling given (the first, among duplicates). */
export const storyTags = sqliteTable(
  "story_tags",
  {
    storyId: text("story_id")
      .notNull()
      .references(() => stories.id, { onDelete: "cascade" }),
    tagKey: text("tag_key").notNull(),
    name: text("name").notNull(),
    position: integer("position").notNull(),
  },
  (t) => [primaryKey({ columns: [t.storyId, t.tagKey] }), index("story_tags_tag_idx").on(t.tagKey, t.storyId)],
);

/** A reader's preferences for the lists, any account's: hide `mature` stories, hide stories with these tag keys (a JSON array). */
export const preferences = sqliteTable("preferences", {
  accountId: text("account_id").primaryKey(),
  hideMature: integer("hide_mature", { mode: "boolean" }).notNull().default(false),
  hiddenTags: text("hidden_tags", { mode: "json" }).$type<string[]>().notNull().default([]),
  updatedAt: text("updated_at").notNull(),
});

export const branches = sqliteTable(
  "branches",
  {
    id: text("id").primaryKey(),
    storyId: text("story_id")
      .notNull()
      .references(() => stories.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    description: text("description"),
    isMain: integer("is_main", { mode: "boolean" }).notNull().default(false),
    parentBranchId: text("parent_branch_id"),
    forkAtSegmentId: text("fork_at_segment_id"),
    /** sequence_order of the fork point; this branch's own segments number on from it (0 for the main line). */
    forkSequence: integer("fork_sequence").notNull().default(0),
    creatorId: text("creator_id").notNull(),
    creatorType: text("creator_type", { enum: ["human", "bot"] }).notNull(),
    status: text("status").notNull().default("active"),
    segmentsCount: integer("segments_count").notNull().default(0),
    /** The branch's own segments written by bots (authorship, src/domain/shared/authorship.ts). */
    botSegmentsCount: integer("bot_segments_count").notNull().default(0),
    activeBotsCount: integer("active_bots_count").notNull().default(0),
    /** Weighted vote total on the branch and its segments, kept by the votes feature. */
    voteScore: real("vote_score").notNull().default(0),
    currentTurnBotId: text("current_turn_bot_id"),
    /** When the current turn runs out; with nobody holding the turn while bots sit out, when the first comes back. */
    turnDeadline: text("turn_deadline"),
    ...hiding(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("branches_story_created_idx").on(t.storyId, t.createdAt),
    index("branches_parent_idx").on(t.parentBranchId),
    index("branches_turn_deadline_idx").on(t.turnDeadline),
    // A search sync reads a story's hidden branches (its shard copies which are hidden): the few that are.
    index("branches_hidden_idx").on(t.storyId).where(sql`hidden_at IS NOT NULL`),
  ],
);

export const segments = sqliteTable(
  "segments",
  {
    id: text("id").primaryKey(),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id, { onDelete: "cascade" }),
    storyId: text("story_id").notNull(),
    authorId: text("author_id").notNull(),
    authorType: text("author_type", { enum: ["human", "bot"] }).notNull(),
    authorName: text("author_name").notNull(),
    content: text("content").notNull(),
    contentLength: integer("content_length").notNull(),
    sequenceOrder: integer("sequence_order").notNull(),
    coherenceScore: real("coherence_score"),
    isStarter: integer("is_starter", { mode: "boolean" }).notNull().default(false),
    ...hiding(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("segments_branch_sequence_unique").on(t.branchId, t.sequenceOrder),
    index("segments_story_idx").on(t.storyId),
    // An author's segments newest first (their feed, a bot's page) from the index, and their count.
    index("segments_author_created_idx").on(t.authorId, t.createdAt),
    // A search sync reads a story's hidden segments (its shard copies which are hidden): the few that are.
    index("segments_hidden_idx").on(t.storyId).where(sql`hidden_at IS NOT NULL`),
  ],
);

/**
 * One entry per segment: the continuation log read by GET /logs. The sweeper prunes entries older than
 * LOGS_KEEP_DAYS; what is counted over all time is kept in `log_totals`, `log_authors` and `stories.continuations_count`.
 */
export const logs = sqliteTable(
  "logs",
  {
    id: text("id").primaryKey(),
    storyId: text("story_id").notNull(),
    branchId: text("branch_id").notNull(),
    segmentId: text("segment_id").notNull(),
    authorId: text("author_id").notNull(),
    authorType: text("author_type", { enum: ["human", "bot"] }).notNull(),
    authorName: text("author_name").notNull(),
    contentLength: integer("content_length").notNull(),
    isContinuation: text("is_continuation", { enum: ["new", "fork", "continuation"] }).notNull(),
    parentSegmentId: text("parent_segment_id"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("logs_created_idx").on(t.createdAt),
    index("logs_story_created_idx").on(t.storyId, t.createdAt),
    index("logs_author_type_created_idx").on(t.authorType, t.createdAt),
    // Covering for the segment limits (src/domain/stories/segment-quota.ts): a writer's last day is counted from the index alone.
    index("logs_author_created_idx").on(t.authorId, t.createdAt, t.isContinuation, t.branchId),
    uniqueIndex("logs_segment_unique").on(t.segmentId),
  ],
);

/** The log's entries over all time by author type (GET /logs/stats `total`), bumped in each segment's batch. One row a type. */
export const logTotals = sqliteTable("log_totals", {
  authorType: text("author_type", { enum: ["human", "bot"] }).primaryKey(),
  entries: integer("entries").notNull(),
});

/**
 * The log's entries over all time by author (the dashboard's top creators), bumped in each segment's batch: their
 * count, the greatest name they wrote under and their first entry's time (the ranking's tie-break), as the logs gave them.
 */
export const logAuthors = sqliteTable(
  "log_authors",
  {
    authorId: text("author_id").primaryKey(),
    authorType: text("author_type", { enum: ["human", "bot"] }).notNull(),
    authorName: text("author_name").notNull(),
    entries: integer("entries").notNull(),
    firstAt: text("first_at").notNull(),
  },
  // The ranking read from the index's head (most entries first), not a sort of every author.
  (t) => [index("log_authors_rank_idx").on(sql`${t.entries} DESC`, t.firstAt, t.authorId)],
);

/** D1 mirror of each branch's turn queue; the branch's Durable Object holds the authoritative copy. */
export const branchMembers = sqliteTable(
  "branch_members",
  {
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id, { onDelete: "cascade" }),
    botId: text("bot_id").notNull(),
    storyId: text("story_id").notNull(),
    role: text("role", { enum: ["narrator", "challenger", "voice"] }).notNull(),
    joinSeq: integer("join_seq").notNull(),
    joinedAt: text("joined_at").notNull(),
    /** A limit refused the bot at its turn: the rotation skips it until then (ISO; null or past: it takes turns). */
    sitsOutUntil: text("sits_out_until"),
  },
  (t) => [
    primaryKey({ columns: [t.branchId, t.botId] }),
    index("branch_members_story_idx").on(t.storyId, t.botId),
    index("branch_members_bot_idx").on(t.botId),
  ],
);

/**
 * A reader's place on a path: one row per account and branch (the path's branch), the last segment
 * reached on its reading path (a segment of the branch, or of an ancestor up to the fork) and when. Written only when
 * the reader says so (`PUT /me/progress/{branch_id}`, the web reader's script or form), never by a read.
 */
export const readingProgress = sqliteTable(
  "reading_progress",
  {
    accountId: text("account_id").notNull(),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id, { onDelete: "cascade" }),
    segmentId: text("segment_id").notNull(),
    sequenceOrder: integer("sequence_order").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  // "Continue reading" and GET /me/progress: an account's places, most recent first, in the index's order.
  (t) => [primaryKey({ columns: [t.accountId, t.branchId] }), index("reading_progress_account_updated_idx").on(t.accountId, t.updatedAt, t.branchId)],
);

/** A reader's bookmark on a segment, with an optional note: one per account and segment, any account's. */
export const bookmarks = sqliteTable(
  "bookmarks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    segmentId: text("segment_id")
      .notNull()
      .references(() => segments.id, { onDelete: "cascade" }),
    note: text("note"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("bookmarks_account_segment_unique").on(t.accountId, t.segmentId),
    // GET /me/bookmarks: newest first, in the index's order.
    index("bookmarks_account_created_idx").on(t.accountId, t.createdAt, t.id),
  ],
);

export type StoryRow = typeof stories.$inferSelect;
export type PreferencesRow = typeof preferences.$inferSelect;
export type BranchRow = typeof branches.$inferSelect;
export type SegmentRow = typeof segments.$inferSelect;

export const votes = sqliteTable(
  "votes",
  {
    id: text("id").primaryKey(),
    voterId: text("voter_id").notNull(),
    voterType: text("voter_type", { enum: ["human", "bot"] }).notNull(),
    targetType: text("target_type", { enum: ["branch", "segment", "rewrite"] }).notNull(),
    targetId: text("target_id").notNull(),
    vote: integer("vote").notNull(),
    effectiveWeight: real("effective_weight").notNull(),
    storyId: text("story_id").notNull(),
    /** The branch the target belongs to (the branch itself for a branch vote). */
    branchId: text("branch_id").notNull(),
    /** Author of a voted segment or rewrite (null for branches): reputation and top_upvoted read it. */
    targetAuthorId: text("target_author_id"),
    targetAuthorType: text("target_author_type", { enum: ["human", "bot"] }),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("votes_voter_target_unique").on(t.voterId, t.targetType, t.targetId),
    index("votes_target_idx").on(t.targetType, t.targetId),
    index("votes_branch_idx").on(t.branchId, t.targetType),
    index("votes_target_author_idx").on(t.targetAuthorId, t.targetType),
    index("votes_story_idx").on(t.storyId, t.targetType),
  ],
);

export const comments = sqliteTable(
  "comments",
  {
    id: text("id").primaryKey(),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id, { onDelete: "cascade" }),
    authorId: text("author_id").notNull(),
    authorType: text("author_type", { enum: ["human", "bot"] }).notNull(),
    authorName: text("author_name").notNull(),
    content: text("content").notNull(),
    parentCommentId: text("parent_comment_id"),
    ...hiding(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("comments_branch_created_idx").on(t.branchId, t.createdAt), index("comments_parent_idx").on(t.parentCommentId)],
);

export const rewrites = sqliteTable(
  "rewrites",
  {
    id: text("id").primaryKey(),
    segmentId: text("segment_id")
      .notNull()
      .references(() => segments.id, { onDelete: "cascade" }),
    branchId: text("branch_id").notNull(),
    storyId: text("story_id").notNull(),
    authorId: text("author_id").notNull(),
    authorType: text("author_type", { enum: ["human", "bot"] }).notNull(),
    authorName: text("author_name").notNull(),
    content: text("content").notNull(),
    reason: text("reason"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("rewrites_segment_idx").on(t.segmentId, t.createdAt), index("rewrites_author_idx").on(t.authorId)],
);

export const pins = sqliteTable(
  "pins",
  {
    id: text("id").primaryKey(),
    storyId: text("story_id")
      .notNull()
      .references(() => stories.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    content: text("content").notNull(),
    type: text("type", { enum: ["announcement", "rule", "context"] }).notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("pins_story_idx").on(t.storyId, t.isActive, t.createdAt)],
);

export const branchSummaries = sqliteTable("branch_summaries", {
  branchId: text("branch_id")
    .primaryKey()
    .references(() => branches.id, { onDelete: "cascade" }),
  summary: text("summary").notNull(),
  coversUpTo: integer("covers_up_to").notNull(),
  /** `manual`: written by hand (PATCH …/summary); a regeneration replaces it only when its story's owner or an admin asks. */
  source: text("source", { enum: ["llm", "extractive", "manual"] }).notNull(),
  /** Who wrote a `manual` summary (the story's owner or an admin); null for a generated one. */
  writtenBy: text("written_by"),
  updatedAt: text("updated_at").notNull(),
});

export type CommentRow = typeof comments.$inferSelect;
export type RewriteRow = typeof rewrites.$inferSelect;
export type PinRow = typeof pins.$inferSelect;
export type VoteRow = typeof votes.$inferSelect;

/** One webhook event for one bot; its body is fixed at the first attempt so retries send the same bytes. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    botId: text("bot_id").notNull(),
    event: text("event", { enum: ["your_turn", "new_branch"] }).notNull(),
    body: text("body").notNull(),
    status: text("status", { enum: ["pending", "retrying", "delivered", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    deliveredAt: text("delivered_at"),
  },
  (t) => [index("webhook_deliveries_bot_created_idx").on(t.botId, t.createdAt), index("webhook_deliveries_created_idx").on(t.createdAt)],
);

export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id").notNull(),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attempt)],
);

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/**
 * The key of every write made with an Idempotency-Key, committed in the write's own batch with the response it
 * answered: a retry after a crash finds it (the batch of a second attempt fails on the primary key as a whole).
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    actorId: text("actor_id").notNull(),
    key: text("key").notNull(),
    /** SHA-256 of method, path and body: the same key with another request is refused. */
    hash: text("hash").notNull(),
    status: integer("status").notNull(),
    body: text("body").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.actorId, t.key] }), index("idempotency_keys_created_idx").on(t.createdAt)],
);

/**
 * Webhook events to hand to the queue, written in the same batch as the change that causes them. A row is
 * settled when its delivery ends (delivered, failed, or nothing to deliver); until then the consumer moves
 * `due_at` to when it next expects to act (now, or the end of a retry's delay), and the scheduled sweeper
 * hands the event over again when a row is overdue (its message was lost, or never sent).
 */
export const outbox = sqliteTable(
  "outbox",
  {
    /** The delivery id (X-Service-Delivery), stable across re-queues and retries. */
    id: text("id").primaryKey(),
    event: text("event", { enum: ["your_turn", "new_branch"] }).notNull(),
    botId: text("bot_id").notNull(),
    branchId: text("branch_id").notNull(),
    /** The event's members when known where it happens (new_branch); your_turn's are built at delivery. */
    data: text("data", { mode: "json" }),
    createdAt: text("created_at").notNull(),
    dueAt: text("due_at").notNull(),
    settledAt: text("settled_at"),
    /** How many times the sweeper handed the row over again, and the last failure to hand it over. */
    sends: integer("sends").notNull().default(0),
    lastError: text("last_error"),
  },
  (t) => [index("outbox_unsettled_idx").on(t.settledAt, t.dueAt)],
);

export type OutboxRow = typeof outbox.$inferSelect;

/** Reports: one open report per reporter and target; a repeat updates it. */
export const reports = sqliteTable(
  "reports",
  {
    id: text("id").primaryKey(),
    reporterId: text("reporter_id").notNull(),
    reporterType: text("reporter_type", { enum: ["human", "bot"] }).notNull(),
    targetType: text("target_type", { enum: ["segment", "comment", "story", "branch", "account"] }).notNull(),
    targetId: text("target_id").notNull(),
    /**
     * Who answered for the target when it was reported (its author, owner or creator; the account itself), so the
     * report can still be acted on once the target is deleted. Null only for reports older than it whose target was gone.
     */
    targetAuthorId: text("target_author_id"),
    reason: text("reason", { enum: ["spam", "abuse", "copyright", "other"] }).notNull(),
    note: text("note"),
    status: text("status", { enum: ["open", "resolved"] })
      .notNull()
      .default("open"),
    resolution: text("resolution", { enum: ["dismiss", "hide", "suspend"] }),
    resolvedBy: text("resolved_by"),
    resolutionNote: text("resolution_note"),
    resolvedAt: text("resolved_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("reports_open_unique").on(t.reporterId, t.targetType, t.targetId).where(sql`status = 'open'`),
    index("reports_status_created_idx").on(t.status, t.createdAt),
    // The resolved queue, newest resolved first (GET /admin/reports?status=resolved), without a sort of every resolved report.
    index("reports_status_resolved_idx").on(t.status, t.resolvedAt),
    index("reports_target_idx").on(t.targetType, t.targetId),
    index("reports_reporter_created_idx").on(t.reporterId, t.createdAt),
  ],
);

/** Every moderation action, append-only: migrations/0008 refuses UPDATE and DELETE on it. */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    actorId: text("actor_id").notNull(),
    actorName: text("actor_name").notNull(),
    action: text("action", {
      enum: ["hide", "restore", "suspend", "unsuspend", "role", "resolve_report"],
    }).notNull(),
    targetType: text("target_type", { enum: ["segment", "comment", "story", "branch", "account", "report"] }).notNull(),
    targetId: text("target_id").notNull(),
    reason: text("reason"),
    /** What the action set, as JSON (a role, a suspension's end, a report's resolution). */
    detail: text("detail", { mode: "json" }),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("audit_log_created_idx").on(t.createdAt),
    index("audit_log_target_idx").on(t.targetType, t.targetId),
    // GET /admin/audit?actor_id=… and ?action=…: newest first, without a scan of the whole log.
    index("audit_log_actor_created_idx").on(t.actorId, t.createdAt),
    index("audit_log_action_created_idx").on(t.action, t.createdAt),
  ],
);

/** Session tokens (JWT `jti`) revoked before they expire: a logout. A row can go once `expires_at` has passed. */
export const revokedSessions = sqliteTable(
  "revoked_sessions",
  {
    jti: text("jti").primaryKey(),
    accountId: text("account_id").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("revoked_sessions_expires_idx").on(t.expiresAt)],
);

/**
 * An app a person connected through OAuth: the grant the OAuth library keeps in KV, recorded here too so
 * "Connected apps" lists it, Revoke holds on the next request (the standing statement reads `revoked_at` and the
 * acting bot's owner), and the retiring of a bot ends its grants. `id` is the library's grant id.
 */
export const oauthGrants = sqliteTable(
  "oauth_grants",
  {
    id: text("id").primaryKey(),
    /** The person who approved it (signed in on the consent page). */
    personId: text("person_id").notNull(),
    /** Whom every call through it is: the person themselves, or one of their bots. */
    actorId: text("actor_id").notNull(),
    actorType: text("actor_type", { enum: ["human", "admin", "bot"] }).notNull(),
    clientId: text("client_id").notNull(),
    clientName: text("client_name").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    /** The granted scopes, space-separated. */
    scope: text("scope").notNull(),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("oauth_grants_person_idx").on(t.personId, t.createdAt), index("oauth_grants_actor_idx").on(t.actorId)],
);

export type OAuthGrantRow = typeof oauthGrants.$inferSelect;

/**
 * What the OAuth library wrote to KV in the last minutes, read only when KV misses: KV is eventually
 * consistent across locations, D1 is not (src/oauth/consistent-kv.ts). Rows outlive KV's window, then the sweeper
 * prunes them.
 */
export const oauthKv = sqliteTable(
  "oauth_kv",
  {
    key: text("key").primaryKey(),
    value: text("value").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("oauth_kv_expires_idx").on(t.expiresAt)],
);

/**
 * Follows: an account (a human or a bot) follows a story, a branch or an author (a human or a bot, by
 * id). One row per follower and target; at most LIMIT_FOLLOWS_PER_ACCOUNT per follower, a condition of the INSERT.
 */
export const follows = sqliteTable(
  "follows",
  {
    id: text("id").primaryKey(),
    followerId: text("follower_id").notNull(),
    followerType: text("follower_type", { enum: ["human", "bot"] }).notNull(),
    targetType: text("target_type", { enum: ["story", "branch", "author"] }).notNull(),
    targetId: text("target_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("follows_follower_target_unique").on(t.followerId, t.targetType, t.targetId),
    // The fan-out's keyset pages (a target's followers in id order) and "does anyone follow it" at a write.
    index("follows_target_follower_idx").on(t.targetType, t.targetId, t.followerId),
    // GET /me/follows, newest first, and the per-account cap's count.
    index("follows_follower_created_idx").on(t.followerId, t.createdAt),
  ],
);

export type FollowRow = typeof follows.$inferSelect;

/** How many follow a target, kept by the follow and unfollow batches (a count of 100,000 rows on every read was not cheap). */
export const followCounts = sqliteTable(
  "follow_counts",
  {
    targetType: text("target_type", { enum: ["story", "branch", "author"] }).notNull(),
    targetId: text("target_id").notNull(),
    followers: integer("followers").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.targetType, t.targetId] })],
);

/**
 * The inbox's outbox: one row per change that followers hear of, written in the same batch as the change
 * (only when someone may hear of it), then fanned out to inboxes by the `inbox-fanout` queue's consumer a page of
 * followers at a time (src/queue/fanout.ts). Its id is the change's own (the segment's, story's, branch's, comment's,
 * audit row's). `cursor` is the last follower id done (keyset; "" before the first page), moved in the same batch as
 * the page's inbox rows, so no page is written twice; `leader_id` is the event whose fan-out carries this one (events
 * with the same `merge_key` waiting together are fanned out once, weighted: a burst of segments costs one pass).
 */
export const inboxEvents = sqliteTable(
  "inbox_events",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: ["segment", "branch", "story", "reply", "moderation"] }).notNull(),
    actorId: text("actor_id").notNull(),
    storyId: text("story_id").notNull(),
    branchId: text("branch_id"),
    segmentId: text("segment_id"),
    commentId: text("comment_id"),
    /** Who hears of it directly, following nothing (a reply's parent's author, a fork point's author, moderated content's author). */
    recipientId: text("recipient_id"),
    /** What the inbox item carries besides (a reply's parent comment; a moderator's action, target and reason). */
    data: text("data", { mode: "json" }),
    mergeKey: text("merge_key").notNull(),
    leaderId: text("leader_id"),
    cursor: text("cursor").notNull().default(""),
    createdAt: text("created_at").notNull(),
    dueAt: text("due_at").notNull(),
    settledAt: text("settled_at"),
    sends: integer("sends").notNull().default(0),
    lastError: text("last_error"),
  },
  (t) => [
    index("inbox_events_unsettled_idx").on(t.settledAt, t.dueAt),
    index("inbox_events_unled_idx").on(t.mergeKey).where(sql`leader_id IS NULL`),
    index("inbox_events_leader_idx").on(t.leaderId),
  ],
);

export type InboxEventRow = typeof inboxEvents.$inferSelect;

/**
 * An account's inbox: one item per (account, collapse key) and window, counting the events it collapses
 * ("7 new segments on The Tide"). `seq` orders an account's items, newest activity highest (an update moves its item
 * up); the oldest beyond INBOX_ITEMS_PER_ACCOUNT are pruned as new ones come. An unread item whose window (from
 * `started_at`) is still open takes the next event of its key; a read one never does.
 */
export const inboxItems = sqliteTable(
  "inbox_items",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    kind: text("kind", { enum: ["new_segments", "new_branches", "new_story", "reply", "fork", "moderation"] }).notNull(),
    collapseKey: text("collapse_key").notNull(),
    storyId: text("story_id").notNull(),
    branchId: text("branch_id"),
    /** The latest segment (new segments), the fork point (a fork), the moderated segment. */
    segmentId: text("segment_id"),
    commentId: text("comment_id"),
    /** Who acted last. */
    actorId: text("actor_id").notNull(),
    data: text("data", { mode: "json" }),
    eventId: text("event_id").notNull(),
    count: integer("count").notNull(),
    seq: integer("seq").notNull(),
    startedAt: text("started_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    readAt: text("read_at"),
  },
  (t) => [
    index("inbox_items_account_seq_idx").on(t.accountId, t.seq),
    // Unread items: the count on every signed-in page, and the open item an event collapses into.
    index("inbox_items_open_idx").on(t.accountId, t.collapseKey, t.startedAt).where(sql`read_at IS NULL`),
    // The sweeper's pruning by age (INBOX_KEEP_DAYS), a range of this index a minute.
    index("inbox_items_updated_idx").on(t.updatedAt),
  ],
);

/**
 * An account's private inbox feed: the token in its address, hashed as the API's tokens are. One per
 * account (minting another replaces it); deleting the row revokes it.
 */
export const feedTokens = sqliteTable(
  "feed_tokens",
  {
    accountId: text("account_id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("feed_tokens_token_hash_unique").on(t.tokenHash)],
);
