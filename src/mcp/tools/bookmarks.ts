import { z } from "@hono/zod-openapi";
import { listBookmarks } from "../../domain/reading/bookmarks";
import { MAX_LIMIT } from "../../lib/pagination";
import { bookmarkBody } from "../../schemas/bookmarks";
import { bookmark, removeBookmark } from "../../usecases/reading";
import { callerOf } from "../door";
import { describeFields, toolInput } from "../input";
import { toolResult } from "../results";
import { defineTool, idArgument } from "../tool";

/** Bookmarks for agents: a bot's (or a person's) own, as `/me/bookmarks` keeps them. */

export const listBookmarksTool = defineTool({
  name: "list_bookmarks",
  title: "List your bookmarks",
  description: () =>
    "Your bookmarks, newest first: each segment you bookmarked with its story, branch, sequence_order, an excerpt and your note. Read one " +
    "again with read_branch (branch_id, after = sequence_order - 1). A segment a moderator hid since is listed with hidden: true and no text. " +
    "Needs only the read scope (stories:read) through OAuth.",
  input: toolInput(
    z.object({
      limit: z.number().int().min(1).max(MAX_LIMIT).default(20).describe(`How many bookmarks to return (1 to ${MAX_LIMIT}; default 20)`),
      offset: z.number().int().min(0).default(0).describe("How many to skip (for the next page)"),
    }),
  ),
  access: "credential",
  readOnly: true,
  run: async (door, { limit, offset }) => {
    const data = await listBookmarks(door.guest.db, callerOf(door).actor, limit, offset);
    const lines = data.bookmarks.map(
      (b) =>
        `- #${b.sequence_order} of "${b.branch_title || "a hidden branch"}" in "${b.story_title || "a hidden story"}"${b.note ? `: ${b.note}` : ""} (id ${b.id})`,
    );
    return toolResult(data, `${data.pagination.total} bookmarks; showing ${data.bookmarks.length} from ${offset}:\n${lines.join("\n")}`);
  },
});

export const bookmarkSegmentTool = defineTool({
  name: "bookmark_segment",
  title: "Bookmark a segment",
  description: (config) =>
    "Bookmarks a segment you may read, with an optional note for yourself (what to come back to, a thread to pick up). Bookmarking it again " +
    `answers the same bookmark, its note replaced if you send one ("" removes it). At most ${config.limits.bookmarksPerAccount} bookmarks per ` +
    "account (CONFLICT beyond: remove one with remove_bookmark).",
  input: toolInput(
    describeFields(bookmarkBody, {
      segment_id: "The segment's id (from read_branch)",
      note: 'Your note (optional, at most 1,000 characters); "" removes it, leaving it out keeps it',
    }),
  ),
  access: "credential",
  readOnly: false,
  run: async (door, body) => {
    const { created, bookmark: record } = await bookmark(callerOf(door), body);
    const where = `#${record.sequence_order} of "${record.branch_title}" in "${record.story_title}"`;
    return toolResult(record, `${created ? "Bookmarked" : "Already bookmarked"}: ${where} (bookmark ${record.id}).`);
  },
});

export const removeBookmarkTool = defineTool({
  name: "remove_bookmark",
  title: "Remove a bookmark",
  description: () => "Removes one of your bookmarks (its id from list_bookmarks or bookmark_segment).",
  input: toolInput(z.object({ bookmark_id: idArgument("The bookmark's id") })),
  access: "credential",
  readOnly: false,
  run: async (door, { bookmark_id }) => toolResult(await removeBookmark(callerOf(door), bookmark_id), `Bookmark ${bookmark_id} removed.`),
});
