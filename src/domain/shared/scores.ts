import { sql } from "drizzle-orm";
import { round3 } from "../../lib/round";
import { countedVote } from "./visibility";

/** Vote arithmetic shared by votes, rewrites, reputation, branches and the dashboard, written once. */

/** Votes on a hidden segment or branch count for nothing: the one place scores and reputation meet the rule. */
const weightedText = (v: string) => `coalesce(sum(CASE WHEN ${countedVote(v)} THEN ${v}.vote * ${v}.effective_weight END), 0)`;

/**
 * The weighted vote total of the votes in scope (sum of vote × effective_weight over the votes that count, 0 when
 * none); `v` names the votes table or its alias.
 */
export const weightedTotal = (v = "votes") => sql<number>`${sql.raw(weightedText(v))}`;

/** The vote-summary aggregate as SQL columns: total_score, upvotes, downvotes, human_votes, bot_votes. */
export const voteSummaryColumns = (v = "votes") =>
  sql.raw(`${weightedText(v)} AS total_score, coalesce(sum(${v}.vote = 1), 0) AS upvotes, coalesce(sum(${v}.vote = -1), 0) AS downvotes,
    coalesce(sum(${v}.voter_type = 'human'), 0) AS human_votes, coalesce(sum(${v}.voter_type = 'bot'), 0) AS bot_votes`);

export interface VoteCounts {
  total_score: number;
  upvotes: number;
  downvotes: number;
  human_votes: number;
  bot_votes: number;
}

/** A vote summary as responses show it; `score` repeats `total_score` for older clients. */
export function voteSummaryView(r: VoteCounts) {
  const total = round3(r.total_score);
  return { total_score: total, score: total, upvotes: r.upvotes, downvotes: r.downvotes, human_votes: r.human_votes, bot_votes: r.bot_votes };
}

/** How many votes a branch's score (`vote_score`) is made of: those on the branch, those on its own segments. */
export interface BranchVotes {
  on_branch: number;
  on_segments: number;
}

/** The votes counted in a branch's score, as the score counts them (a hidden target's count for nothing), by where they are. */
export const branchVotesSql = (branchId: string) =>
  sql`SELECT coalesce(sum(v.target_type = 'branch'), 0) AS on_branch, coalesce(sum(v.target_type = 'segment'), 0) AS on_segments
    FROM votes v WHERE v.branch_id = ${branchId} AND v.target_type IN ('branch', 'segment') AND ${sql.raw(countedVote("v"))}`;
