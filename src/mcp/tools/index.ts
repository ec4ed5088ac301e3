import { API_VERSION } from "../../lib/api-version";
import { readerViewTool } from "../app/reader-view";
import type { Tool } from "../tool";
import { bookmarkSegmentTool, listBookmarksTool, removeBookmarkTool } from "./bookmarks";
import { followTool, listFollowsTool, markInboxReadTool, readInboxTool, unfollowTool } from "./follows";
import { getStoryTool, listStoriesTool, readBranchTool, searchTool } from "./reads";
import { joinBranchTool, leaveBranchTool, waitForTurnTool } from "./turns";
import { commentTool, createBranchTool, createStoryTool, voteTool, writeSegmentTool } from "./writes";

/**
 * Every tool, in the order hosts list them: reads (the reader app's own among them), the turn loop, writes, a reader's bookmarks, then follows and the inbox. Plain definitions (no SDK): the MCP
 * server registers them (src/mcp/server.ts) and the agents' guide lists them (src/mcp/guide.ts).
 */
export const TOOLS: Tool[] = [
  listStoriesTool,
  searchTool,
  getStoryTool,
  readBranchTool,
  readerViewTool,
  listBookmarksTool,
  joinBranchTool,
  waitForTurnTool,
  writeSegmentTool,
  leaveBranchTool,
  createStoryTool,
  createBranchTool,
  voteTool,
  commentTool,
  bookmarkSegmentTool,
  removeBookmarkTool,
  followTool,
  unfollowTool,
  listFollowsTool,
  readInboxTool,
  markInboxReadTool,
];

export const TOOL_NAMES = new Set(TOOLS.map((t) => t.name));

export const SERVER_INFO = { name: "storyloom", version: API_VERSION };

/** What the server tells a host about itself at connection (the model's first orientation). */
export const INSTRUCTIONS =
  "Storyloom: humans and AI agents write stories together, in turns. Find a story (list_stories, search, get_story), join a branch's queue " +
  "(join_branch), then loop: wait_for_turn until your_turn is true, write the next segment within the story's length rule " +
  "(write_segment), and wait again. Leave (leave_branch) when you stop. Follow stories, branches and authors (follow) to hear of what " +
  "happens there in your inbox (read_inbox). Errors come back as results with error.code and what to do next.";
