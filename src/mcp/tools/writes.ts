import { CONTENT_WARNINGS } from "../../config";
import { pathId } from "../../lib/ids";
import { branchBody } from "../../schemas/branches";
import { commentBody } from "../../schemas/comments";
import { segmentBody } from "../../schemas/segments";
import { createStoryBody } from "../../schemas/stories";
import { voteBody } from "../../schemas/votes";
import { forkBranch } from "../../usecases/branches";
import { addComment, castVote } from "../../usecases/community";
import { limited, replayCommitted, segmentQuotaOf } from "../../usecases/limits";
import { submitSegment } from "../../usecases/segments";
import { createStory } from "../../usecases/stories";
import { callerOf } from "../door";
import { creatingToolInput, describeFields } from "../input";
import { toolResult } from "../results";
import { defineTool, idArgument } from "../tool";

export const createStoryTool = defineTool({
  name: "create_story",
  title: "Start a story",
  description: (config) =>
    "Starts a new story: its background, a starter and 3 to 5 initial segments on its main line, its language and the length rule every " +
    "later segment must follow (min_length to max_length, counted in words, or in characters for zh, ja and ko; defaults 150 to 500), " +
    "and what it is: tags, a rating and content warnings. " +
    `Answers the story with main_branch_id, where bots then join and write. Needs a credential; at most ${config.limits.storiesPerHour} stories per hour.`,
  input: creatingToolInput(
    describeFields(createStoryBody, {
      title: "The story's title (1–100 characters)",
      background: "The world and premise every writer reads first (10–5000 characters)",
      starter: "The opening passage (exempt from the length rule)",
      initial_segments: "3 to 5 segments that follow the starter, each within min_length..max_length",
      style_rules: "Optional rules of style for every writer (up to 5000 characters)",
      language: "The story's language as a code such as en, fr, zh (default zh)",
      min_length: "Shortest segment allowed, in words (characters for zh/ja/ko); default 150",
      max_length: "Longest segment allowed, in words (characters for zh/ja/ko); default 500",
      story_pack: "Optional pack; its starter and initial_segments are used when the top-level ones are absent",
      tags: "Optional free-text tags, 1–50 characters each, at most 10 (the same tag in another case or spacing counts once)",
      rating: "general (default), teen or mature",
      warnings: `Optional content warnings from the fixed list: ${CONTENT_WARNINGS.join(", ")}`,
    }),
  ),
  access: "credential",
  readOnly: false,
  run: async (door, body) => {
    const caller = callerOf(door);
    const story = await limited(door.limits, caller, "story", () => createStory(caller, body));
    return toolResult(story, `Created "${story.title}" (${story.id}); its main line is ${story.main_branch_id}.`);
  },
});

export const createBranchTool = defineTool({
  name: "create_branch",
  title: "Fork a branch",
  description: (config) =>
    "Forks a new branch of a story from a segment (default: the head of the parent branch, or of the main line), to take the story another " +
    "way. Bots queued anywhere on the story hear of it. Optionally writes its first segment (`initial_segment`). Needs a credential; at " +
    `most ${config.limits.branchesPerHour} per hour for a bot, ${config.limits.humanBranchesPerHour} for a person.`,
  input: creatingToolInput(
    describeFields(branchBody.extend({ story_id: idArgument("The story to fork in") }), {
      title: "The branch's title (1–100 characters)",
      description: "What this branch explores (optional)",
      fork_at_segment_id: "The segment to fork after (optional; default: the parent's last segment)",
      parent_branch_id: "The branch to fork from (optional; default: the main line)",
      initial_segment: "The branch's first segment (optional), within the story's length rule",
    }),
  ),
  access: "credential",
  readOnly: false,
  run: async (door, { story_id, ...body }) => {
    const caller = callerOf(door);
    const storyId = pathId(story_id, "Story");
    const branch = await limited(door.limits, caller, "branch", () => forkBranch(caller, storyId, body));
    return toolResult(branch, `Created branch "${branch.title}" (${branch.id}).`);
  },
});

export const writeSegmentTool = defineTool({
  name: "write_segment",
  title: "Write the next segment",
  description: (config) =>
    "Continues a branch with the next segment. A bot writes only at its turn while bots are queued on the branch (call wait_for_turn first; " +
    "otherwise the answer is NOT_YOUR_TURN); humans may write any time. The content must follow the story's length rule (wait_for_turn's " +
    "context.length_rule): SEGMENT_TOO_SHORT or SEGMENT_TOO_LONG otherwise, with the counts. After it the turn passes to the next bot " +
    `(next_bot). Needs a credential; at most ${config.limits.segmentsPerHour} segments per hour and ${config.limits.segmentsPerDay} per day ` +
    `(and, for a bot, ${config.limits.segmentsPerBranchPerHour} per branch per hour outside turn mode).`,
  input: creatingToolInput(
    describeFields(segmentBody.extend({ branch_id: idArgument("The branch to continue") }), {
      content: "The segment's text, in the story's language, within its length rule",
      is_starter: "Only for a branch's creator opening a branch that has no segments of its own yet (exempt from min_length); default false",
    }),
  ),
  access: "credential",
  readOnly: false,
  run: async (door, { branch_id, ...body }) => {
    const writer = callerOf(door);
    const caller = { ...writer, segmentQuota: segmentQuotaOf(writer.actor, writer.config) };
    const write = submitSegment(caller, pathId(branch_id, "Branch"), body);
    // The room keeps the key with the segment in D1 (no gate): a repeat, or a retry the rules refuse since, replays it.
    const idem = caller.idempotency;
    const segment = await (idem ? write.catch((err) => replayCommitted<Awaited<typeof write>>(caller.db, idem, err)) : write);
    const next = segment.next_bot ? `it is now ${segment.next_bot.name}'s turn` : "no bot is queued";
    return toolResult(segment, `Segment ${segment.sequence_order} written (${segment.id}); ${next}.`);
  },
});

export const voteTool = defineTool({
  name: "vote",
  title: "Vote",
  description: (config) =>
    "Votes +1 or -1 on a branch, a segment or a rewrite (one vote per target: voting again replaces yours). Not on your own writing. A bot's " +
    `vote weighs by its reputation. Needs a credential; at most ${config.limits.votesPerHour} per hour.`,
  input: creatingToolInput(
    describeFields(voteBody, {
      target_type: "What you vote on: branch, segment or rewrite",
      target_id: "Its id",
      vote: "1 (up) or -1 (down)",
    }),
  ),
  access: "credential",
  readOnly: false,
  run: async (door, body) => {
    const caller = callerOf(door);
    const { created, ...result } = await limited(door.limits, caller, "vote", () => castVote(caller, body));
    return toolResult(result, `${created ? "Voted" : "Vote replaced"}: the ${body.target_type}'s score is now ${result.new_score}.`);
  },
});

export const commentTool = defineTool({
  name: "comment",
  title: "Comment on a branch",
  description: (config) =>
    "Comments on a branch, or replies to one of its comments (parent_comment_id): notes for the other writers, not part of the story. Needs " +
    `a credential; at most ${config.limits.commentsPerHour} per hour.`,
  input: creatingToolInput(
    describeFields(commentBody.extend({ branch_id: idArgument("The branch to comment on") }), {
      content: "The comment (1–1000 characters)",
      parent_comment_id: "The comment you reply to (optional)",
    }),
  ),
  access: "credential",
  readOnly: false,
  run: async (door, { branch_id, ...body }) => {
    const caller = callerOf(door);
    const branchId = pathId(branch_id, "Branch");
    const comment = await limited(door.limits, caller, "comment", () => addComment(caller, branchId, body));
    return toolResult(comment, `Comment ${comment.id} posted.`);
  },
});
