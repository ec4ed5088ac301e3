import { type SQL, sql } from "drizzle-orm";
import type { RateState, Refusal } from "../../lib/limit-error";

/** An account's segment limits (wrangler.toml through the config); admins have none. */
export interface SegmentLimits {
  perHour: number;
  perDay: number;
  /**
   * Segments on one branch per hour, a bot's (null for a person, held to the account-wide limits only): only outside
   * turn mode (in turn mode the queue paces the branch), see `perBranchCounts`.
   */
  perBranchPerHour: number | null;
}

/** Whether a write counts against the per-branch limit: the writer has one (a bot) and writes outside turn mode. */
export const perBranchCounts = (limits: SegmentLimits, turnMode: boolean) => limits.perBranchPerHour !== null && !turnMode;

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** Where one writer stands: its segments in the last day and hour, and on this branch in the last hour. */
export interface SegmentUsage {
  day: number;
  dayOldest: string | null;
  hour: number;
  hourOldest: string | null;
  branch: number;
  branchOldest: string | null;
}

/** What the limits' SQL binds for one write: the writer, the branch, the windows' bounds and the limits. */
export interface LimitValues extends Record<string, unknown> {
  authorId: string;
  branchId: string;
  /** ISO timestamps an hour and a day before the write. */
  hourAgo: string;
  dayAgo: string;
  perHour: number;
  perDay: number;
  perBranchPerHour: number;
}

export function limitValues(authorId: string, branchId: string, limits: SegmentLimits, now: number): LimitValues {
  const { perHour, perDay } = limits;
  const hourAgo = new Date(now - HOUR_MS).toISOString();
  // A person's write never reads the per-branch bound (its statement has no such condition): any number binds.
  const perBranchPerHour = limits.perBranchPerHour ?? 0;
  return { authorId, branchId, hourAgo, dayAgo: new Date(now - DAY_MS).toISOString(), perHour, perDay, perBranchPerHour };
}

/**
 * Segment limits are counted in D1, in the write's own batch, from the log of what the writer wrote (every
 * segment but a story's opening ones, which a story's own limit covers): exact under concurrency (D1 runs one
 * batch at a time), and a crashed request that wrote nothing counts nothing. The bounds are ISO timestamps, as
 * `created_at` is. Every window is counted in one pass over the writer's last day (the day's index range holds
 * the hour's), by the condition and by the usage read alike. Its cost grows with what the writer wrote that day,
 * which the daily limit bounds.
 */
const lastDay = (v: LimitValues): SQL => sql`FROM logs WHERE author_id = ${v.authorId} AND is_continuation != 'new' AND created_at > ${v.dayAgo}`;

/** The condition a segment insert carries: the writer is under every limit that applies to this write. */
export function underLimits(v: LimitValues, perBranch: boolean): SQL {
  const branch = perBranch ? sql` AND coalesce(sum(created_at > ${v.hourAgo} AND branch_id = ${v.branchId}), 0) < ${v.perBranchPerHour}` : sql``;
  return sql`(SELECT count(*) < ${v.perDay} AND coalesce(sum(created_at > ${v.hourAgo}), 0) < ${v.perHour}${branch} ${lastDay(v)})`;
}

/** Read at the end of the write's batch: the usage after the write (or as it stands, when it was refused). */
export const usageSql = (v: LimitValues): SQL =>
  sql`SELECT count(*) AS day, min(created_at) AS dayOldest,
      coalesce(sum(created_at > ${v.hourAgo}), 0) AS hour, min(CASE WHEN created_at > ${v.hourAgo} THEN created_at END) AS hourOldest,
      coalesce(sum(created_at > ${v.hourAgo} AND branch_id = ${v.branchId}), 0) AS branch,
      min(CASE WHEN created_at > ${v.hourAgo} AND branch_id = ${v.branchId} THEN created_at END) AS branchOldest
    ${lastDay(v)}`;

interface Window {
  code: Refusal["code"];
  label: string;
  limit: number;
  count: number;
  oldest: string | null;
  windowMs: number;
}

/** The limits that apply, in the order a refusal names them: per hour, per day, then per branch. */
function windows(usage: SegmentUsage, limits: SegmentLimits, perBranch: boolean): Window[] {
  const hourly = (limit: number, count: number, oldest: string | null): Window => ({
    code: "RATE_LIMIT_EXCEEDED",
    label: `${limit} per hour`,
    limit,
    count,
    oldest,
    windowMs: HOUR_MS,
  });
  return [
    hourly(limits.perHour, usage.hour, usage.hourOldest),
    { code: "DAILY_QUOTA_EXCEEDED", label: `${limits.perDay} per day`, limit: limits.perDay, count: usage.day, oldest: usage.dayOldest, windowMs: DAY_MS },
    ...(perBranch && limits.perBranchPerHour !== null ? [hourly(limits.perBranchPerHour, usage.branch, usage.branchOldest)] : []),
  ];
}

function rate(w: Window, now: number): RateState {
  const oldest = w.oldest ? Date.parse(w.oldest) : now;
  return { limit: w.limit, remaining: Math.max(0, w.limit - w.count), reset: Math.ceil((oldest + w.windowMs) / 1000) };
}

/** After a write: the counter closest to its limit, for the X-RateLimit-* headers. */
export function tightest(usage: SegmentUsage, limits: SegmentLimits, perBranch: boolean, now: number): RateState {
  return windows(usage, limits, perBranch)
    .map((w) => rate(w, now))
    .sort((a, b) => a.remaining - b.remaining)[0];
}

/** A refused write: the limit it ran into, and the instant the writer may write again (epoch ms). */
export type SegmentRefusal = Refusal & { writableAt: number };

/**
 * When a full window frees: a window after its oldest row. One with no row (a limit of 0) never frees by itself: a
 * window after the refusal, computed once and `kept` (the writer's return while it sits out for it), so a refusal
 * repeated meanwhile names the same instant and changes nothing (it does not creep with every retry).
 */
const frees = (w: Window, now: number, kept: number | null) =>
  w.oldest ? Date.parse(w.oldest) + w.windowMs : kept !== null && kept > now ? kept : now + w.windowMs;

/**
 * After a refused write: the limit it ran into (null: none did, so something else refused it). When several are
 * full, the one that frees last, so `retry_after` says when the writer may write again. `kept`: when the writer
 * already sits out until (a queued bot refused before), for the windows that have no row to free.
 */
export function refusalOf(usage: SegmentUsage, limits: SegmentLimits, perBranch: boolean, now: number, kept: number | null = null): SegmentRefusal | null {
  const full = windows(usage, limits, perBranch)
    .filter((w) => w.count >= w.limit)
    .map((w) => ({ w, frees: frees(w, now, kept) }));
  if (!full.length) return null;
  const { w, frees: at } = full.reduce((last, x) => (x.frees > last.frees ? x : last));
  return { code: w.code, label: w.label, retryAfter: Math.max(1, Math.ceil((at - now) / 1000)), rate: rate(w, now), writableAt: at };
}
