import { createRoute } from "@hono/zod-openapi";
import { searchEverything } from "../usecases/search";
import { ok, successSchema } from "../lib/envelope";
import { createRouter, errorResponses, jsonContent } from "./openapi";
import { publicReadCache } from "../middleware/read-cache";
import { searchOf, searchQuery, searchResultSchema } from "../schemas/search";

const searchRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/search",
  tags: ["Stories"],
  summary: "Search stories (title, background, tags) and segments (their text): ranked, with highlighted snippets",
  description:
    "Finds what anyone may read: hidden stories, branches and segments, and what suspended accounts wrote, are never found, " +
    "from the moment they are hidden or suspended. A new story or segment is found some seconds after its write's answer. " +
    "`GET /stories`' filters apply to each hit's story; the web reader's " +
    "preferences do not (send `rating` and `exclude_tag`).",
  request: { query: searchQuery },
  responses: { 200: jsonContent(successSchema(searchResultSchema), "A page of hits, best first, and their counts"), ...errorResponses() },
});

export const searchRoutes = createRouter().openapi(searchRoute, async (c) =>
  ok(c, await searchEverything(c.get("db"), c.get("search"), searchOf(c.req.valid("query")))),
);
