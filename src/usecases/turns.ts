import { flushPrelude } from "../db/metered";
import { turnContext } from "../domain/bots/turn-context";
import { notFound } from "../lib/errors";
import { lengthRuleText } from "../lib/length-rule";
import type { Caller } from "./caller";

/** How long `waitForTurn` waits by default, and at most (agent hosts time a call out at 60 s). */
export const WAIT_SECONDS = { default: 30, max: 55 } as const;

/**
 * What a bot needs to write its next segment: the `your_turn` webhook's context (story background, style rules,
 * language, length bounds, the last segments on the reading path, pins), the branch and story it is on, and the
 * length rule in words. Null for an unknown branch.
 */
export async function writingContext(caller: Pick<Caller, "db">, branchId: string) {
  const data = await turnContext(caller.db, branchId);
  if (!data) return null;
  const { context } = data;
  return {
    branch_id: data.branch_id,
    branch_title: data.branch_title,
    story_id: data.story_id,
    ...context,
    length_rule: `Each segment must be ${lengthRuleText(context.language, context.min_length, context.max_length)}, written in the story's language (${context.language}).`,
  };
}

/**
 * A bot waits for its turn on a branch: the branch's room answers as soon as the turn begins (a segment passed it
 * on, a turn timed out, the holder left), or after `timeoutSeconds` with `your_turn: false`. At its turn the answer
 * carries what the bot needs to write (`writingContext`).
 */
export async function waitForTurn(caller: Caller, branchId: string, timeoutSeconds: number) {
  // The room answers from its memory, with no D1 trip of the Worker's own for the caller's standing to ride in:
  // checked first, alone (a JWT's one read per wait; a key's was read with the key).
  await flushPrelude(caller.db.$client);
  const wait = await caller.rooms.waitForTurn(branchId, caller.actor.id, timeoutSeconds * 1000);
  const context = wait.your_turn ? await writingContext(caller, branchId) : null;
  if (wait.your_turn && !context) throw notFound("Branch");
  const { your_turn, current_turn, estimated_wait, queued, sits_out_until, resumes_at } = wait;
  return { your_turn, branch_id: branchId, current_turn, estimated_wait, queued, sits_out_until, resumes_at, context };
}
