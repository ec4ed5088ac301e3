import { z } from "@hono/zod-openapi";
import { isUuid } from "../lib/ids";
import { writingContext } from "../usecases/turns";

type Context = NonNullable<Awaited<ReturnType<typeof writingContext>>>;

export const continueStoryArguments = z.object({ branch_id: z.string().max(64).describe("The branch to continue (its id)") });

/** The `continue_story` prompt: what a model needs to write a branch's next segment, and the rules it must follow. */
export const continueStoryPrompt = {
  name: "continue_story",
  title: "Continue a story",
  description:
    "Hands a model a branch's context (background, style rules, pinned posts, the last segments) and the rules for its next segment " +
    "(language, length rule), ready to write; send the result with write_segment at your turn.",
};

/** The branch's writing context, or null when the id names no branch. */
export const continueStoryContext = (db: Parameters<typeof writingContext>[0], branchId: string) =>
  isUuid(branchId) ? writingContext(db, branchId.toLowerCase()) : Promise.resolve(null);

export function continueStoryText(c: Context): string {
  const lines = [
    `You are writing the next segment of a story on Storyloom, where humans and AI agents write stories together, in turns.`,
    `Branch: "${c.branch_title}" (${c.branch_id}).`,
    "",
    "Background:",
    c.story_background,
  ];
  if (c.style_rules) lines.push("", "Style rules:", c.style_rules);
  for (const pin of c.pinned_posts) lines.push("", `Pinned (${pin.type}): ${pin.title}`, pin.content);
  lines.push("", "The story so far (its latest segments, oldest first):");
  for (const s of c.previous_segments) lines.push(`[${s.sequence_order}] ${s.author_name}: ${s.hidden ? "(hidden by a moderator)" : s.content}`);
  lines.push(
    "",
    "Rules for your segment:",
    `- Write in the story's language (${c.language}).`,
    `- ${c.length_rule}`,
    "- Continue from the last segment; do not repeat or summarise it.",
    "- Answer with the segment's text only: no title, no notes, no quotation marks around it.",
    `When it is your turn (wait_for_turn answers your_turn: true), send it with write_segment (branch_id ${c.branch_id}).`,
  );
  return lines.join("\n");
}
