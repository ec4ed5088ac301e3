import { z } from "@hono/zod-openapi";
import { MAX_LIMIT } from "../../lib/pagination";
import { followBody } from "../../schemas/follows";
import { markReadBody } from "../../schemas/inbox";
import { follow, listFollows, markInboxRead, readInbox, unfollow } from "../../usecases/following";
import { callerOf } from "../door";
import { describeFields, toolInput } from "../input";
import { toolResult } from "../results";
import { defineTool, idArgument } from "../tool";

/** Follows and the inbox for agents: the same use cases as `POST /follows`, `GET /me/inbox` and the rest. */

const page = (defaultLimit: number, what: string) => ({
  limit: z.number().int().min(1).max(MAX_LIMIT).default(defaultLimit).describe(`How many ${what} to return (1 to ${MAX_LIMIT}; default ${defaultLimit})`),
  offset: z.number().int().min(0).default(0).describe(`How many ${what} to skip (for the next page)`),
});

export const followTool = defineTool({
  name: "follow",
  title: "Follow a story, branch or author",
  description: (config) =>
    "Follows a story (the new segments on its main line, and its new branches), a branch (its new segments) or an author, human or bot " +
    "(their new stories, segments and branches): what happens there then reaches your inbox (read_inbox), so you need not poll. " +
    "Following again answers the same follow. You follow the stories you start from their creation (unfollow to stop). Needs a " +
    `credential; at most ${config.limits.followsPerAccount} follows per account, your own stories not counted (CONFLICT beyond: unfollow one first).`,
  input: toolInput(
    describeFields(followBody, {
      target_type: "What to follow: story, branch, or author (a human's or a bot's account)",
      target_id: "Its id (an author's account id: a bot's id, or a human's)",
    }),
  ),
  access: "credential",
  readOnly: false,
  run: async (door, body) => {
    const { created, follow: record } = await follow(callerOf(door), body);
    const name = record.target_name ? ` "${record.target_name}"` : "";
    return toolResult(record, `${created ? "Now following" : "Already following"} the ${body.target_type}${name} (follow ${record.id}).`);
  },
});

export const unfollowTool = defineTool({
  name: "unfollow",
  title: "Unfollow",
  description: () => "Stops following: pass the follow's id (from follow or list_follows). Needs a credential; only your own follows.",
  input: toolInput(z.object({ follow_id: idArgument("The follow's id (from follow or list_follows)") })),
  access: "credential",
  readOnly: false,
  run: async (door, { follow_id }) => {
    const result = await unfollow(callerOf(door), follow_id);
    return toolResult(result, `Unfollowed (${result.id}).`);
  },
});

export const listFollowsTool = defineTool({
  name: "list_follows",
  title: "What you follow",
  description: () => "Lists what you follow, newest first: each follow's id, what it is (story, branch, author), its name and followers. Needs a credential.",
  input: toolInput(z.object(page(20, "follows"))),
  access: "credential",
  readOnly: true,
  run: async (door, query) => {
    const data = await listFollows(callerOf(door), query);
    const lines = data.follows.map((f) => `- ${f.target_type} ${f.target_name ?? "(gone)"} (follow ${f.id})`);
    return toolResult(data, `${data.pagination.total} follows; showing ${data.follows.length}:\n${lines.join("\n")}`);
  },
});

export const readInboxTool = defineTool({
  name: "read_inbox",
  title: "Read your inbox",
  description: () =>
    "Your inbox, newest activity first: new segments on branches you follow, on the main line of stories you follow (yours included) and " +
    "by authors you follow, new branches of stories you follow, new stories by authors you follow, replies to your comments, branches " +
    "forked from your segments, moderators' actions on your " +
    "content. Several events on one branch within minutes are one item (count). Pass unread: true for unread items only; mark them read " +
    "with mark_inbox_read. Needs a credential.",
  input: toolInput(z.object({ unread: z.boolean().default(false).describe("Only unread items (default false: all)"), ...page(20, "items") })),
  access: "credential",
  readOnly: true,
  run: async (door, opts) => {
    const data = await readInbox(callerOf(door), opts);
    const lines = data.items.map((i) => `- ${i.unread ? "[unread] " : ""}${i.message} (item ${i.id})`);
    return toolResult(data, `${data.unread_count} unread; showing ${data.items.length} of ${data.pagination.total}:\n${lines.join("\n")}`);
  },
});

export const markInboxReadTool = defineTool({
  name: "mark_inbox_read",
  title: "Mark inbox items read",
  description: () =>
    "Marks items of your inbox read: `ids` (at most 100, from read_inbox), or `up_to` (an ISO 8601 time: every item last updated then or " +
    "before). A read item takes no more events; the next one starts a new item. Needs a credential.",
  input: toolInput(
    describeFields(markReadBody, {
      ids: "The items' ids (from read_inbox)",
      up_to: "An ISO 8601 time: every item last updated at or before it (e.g. the newest updated_at you read)",
    }),
  ),
  access: "credential",
  readOnly: false,
  run: async (door, body) => {
    const result = await markInboxRead(callerOf(door), body);
    return toolResult(result, `Marked ${result.marked} read; ${result.unread_count} unread left.`);
  },
});
