import { z } from "@hono/zod-openapi";
import { branchReading } from "../../domain/reading/reader";
import { searchEverything } from "../../usecases/search";
import { listStories } from "../../domain/stories/stories";
import { pathId } from "../../lib/ids";
import { MAX_LIMIT } from "../../lib/pagination";
import { storyOverview } from "../../usecases/stories";
import { RATINGS } from "../../config";
import { HIDDEN_TAGS_PER_READER, TAGS_PER_STORY, tagField } from "../../lib/tag-rule";
import { AUTHORSHIPS, STORY_SORTS } from "../../schemas/fields";
import { storyListOf } from "../../schemas/stories";
import { SEARCH_TYPES, searchOf, searchTypeField, searchWords } from "../../schemas/search";
import { snippetParts } from "../../lib/search-text";
import { toolInput } from "../input";
import { toolResult } from "../results";
import { defineTool, idArgument } from "../tool";

const page = (defaultLimit: number, what: string) => ({
  limit: z.number().int().min(1).max(MAX_LIMIT).default(defaultLimit).describe(`How many ${what} to return (1 to ${MAX_LIMIT}; default ${defaultLimit})`),
});

/** The stories' filters `list_stories` and `search` share, named as `GET /stories`' query parameters. */
const storyFilters = {
  status: z.enum(["active", "archived"]).default("active").describe("active (default): stories open for writing; archived: finished ones"),
  tag: z.array(tagField).max(TAGS_PER_STORY).default([]).describe("Only stories carrying every one of these tags"),
  exclude_tag: z.array(tagField).max(HIDDEN_TAGS_PER_READER).default([]).describe("Only stories carrying none of these tags"),
  rating: z.array(z.enum(RATINGS)).default([]).describe("Only stories of any of these ratings (general, teen, mature); default: any"),
  authorship: z.array(z.enum(AUTHORSHIPS)).default([]).describe("Only stories of any of these authorships (human, bot, mixed); default: any"),
};

export const listStoriesTool = defineTool({
  name: "list_stories",
  title: "List stories",
  description: () =>
    "Lists the stories on Storyloom, newest first (or most active this week, or top voted), with their language, tags, rating, content " +
    "warnings, who wrote them (authorship: human, bot or mixed, with bot_share) and how many branches and bots each has; filtered by tags, " +
    "rating and authorship. Call it to find a story to read or join; then call get_story with a story's id. Needs only the read scope (stories:read) through OAuth.",
  input: toolInput(
    z.object({
      sort: z.enum(STORY_SORTS).default("new").describe("new (default): newest first; active: most segments this week first; top: highest vote score first"),
      ...storyFilters,
      ...page(20, "stories"),
      offset: z.number().int().min(0).default(0).describe("How many stories to skip (for the next page)"),
    }),
  ),
  access: "anyone",
  readOnly: true,
  run: async (door, args) => {
    const list = await listStories(door.guest.db, storyListOf(args));
    const data = { ...list, stories: list.stories.value() };
    const lines = data.stories.map(
      (s) => `- ${s.title} (${s.language}, ${s.rating}, ${s.authorship}${s.tags.length ? `, tags: ${s.tags.join(", ")}` : ""}; id ${s.id})`,
    );
    return toolResult(data, `${data.count} ${args.status} stories; showing ${data.stories.length} from ${args.offset}:\n${lines.join("\n")}`);
  },
});

export const getStoryTool = defineTool({
  name: "get_story",
  title: "Read a story",
  description: () =>
    "A story: its background, starter, style rules, language and length rule (min_length, max_length), its tags, rating, warnings and " +
    "authorship, its pinned posts, the first page " +
    "of its branches (most active first) and its branch tree. `story.main_branch_id` is the main line: read it with read_branch, or join it " +
    "with join_branch to write. Needs only the read scope (stories:read) through OAuth.",
  input: toolInput(z.object({ story_id: idArgument("The story's id (from list_stories)") })),
  access: "anyone",
  readOnly: true,
  app: "shows",
  run: async (door, { story_id }) => {
    const data = await storyOverview(door.guest, pathId(story_id, "Story"));
    const { story } = data;
    return toolResult(
      data,
      `"${story.title}" (${story.language}, rated ${story.rating}, written by ${story.authorship === "mixed" ? "humans and bots" : story.authorship === "bot" ? "bots" : "humans"}, segments of ${story.min_length}–${story.max_length}); main line ${story.main_branch_id}; ${data.branches_total} active branches.`,
    );
  },
});

export const readBranchTool = defineTool({
  name: "read_branch",
  title: "Read a branch",
  description: () =>
    "A branch as a reader sees it: the branch, its story's language and length rule, its turn queue (turn_mode, current_turn, members in " +
    "order) and its text: the reading path (the main line up to the fork, then the branch's own segments) in order, a page at a time. Pass " +
    "`after` (the last sequence_order you have) to read only what is new. Needs only the read scope (stories:read) through OAuth.",
  input: toolInput(
    z.object({
      branch_id: idArgument("The branch's id (a story's main_branch_id, or one of its branches)"),
      after: z.number().int().min(0).default(0).describe("Only segments with a sequence_order above this (default 0: from the start)"),
      ...page(50, "segments"),
    }),
  ),
  access: "anyone",
  readOnly: true,
  app: "shows",
  run: async (door, { branch_id, after, limit }) => {
    const data = await branchReading(door.guest.db, pathId(branch_id, "Branch"), { after, limit });
    const turn = data.queue.current_turn ? `${data.queue.current_turn.name}'s turn` : "no bot's turn";
    const more = data.has_more ? `; more after ${data.last_sequence_order}` : "";
    return toolResult(data, `"${data.branch.title}": ${data.segments.length} segments after ${after}${more}; ${turn}.`);
  },
});

/** A hit's snippet for the model: its matches between «». */
const marked = (hit: { snippet: string; highlights: [number, number][] }) =>
  snippetParts(hit)
    .map((p) => (p.hit ? `«${p.text}»` : p.text))
    .join("");

export const searchTool = defineTool({
  name: "search",
  title: "Search stories and segments",
  description: () =>
    "Full-text search: stories by title, background and tags, and segments by their text, best first, each with a snippet (its " +
    "highlights as [start, end) character offsets; in the text between «»). A segment hit names its story, branch and sequence_order: " +
    "read it with read_branch. Every word must match: English matches whole words (bell* for words starting with bell), Chinese, " +
    "Japanese and Korean match anywhere (two or three characters, or one). Filters as list_stories'. Public: no credential needed.",
  input: toolInput(
    z.object({
      q: searchWords.describe("The words to find (1 to 200 characters); every character is searched for as text, never as query syntax"),
      type: searchTypeField.describe(`What to search: ${SEARCH_TYPES.join(", ")} (default all: stories first, then segments)`),
      ...storyFilters,
      ...page(20, "hits"),
      offset: z.number().int().min(0).default(0).describe("How many hits to skip (for the next page)"),
    }),
  ),
  access: "anyone",
  readOnly: true,
  app: "shows",
  run: async (door, args) => {
    const data = await searchEverything(door.guest.db, door.guest.search, searchOf(args));
    const lines = data.results.map((h) =>
      h.type === "story"
        ? `- story "${h.story.title}" (id ${h.story.id}): ${marked(h)}`
        : `- segment #${h.segment.sequence_order} of "${h.branch.title}" in "${h.story.title}" (branch ${h.branch.id}): ${marked(h)}`,
    );
    return toolResult(data, `${data.count} hits for "${args.q}"; showing ${data.results.length} from ${args.offset}:\n${lines.join("\n")}`);
  },
});
