import { createRoute, z } from "@hono/zod-openapi";
import { suggestTags } from "../domain/discovery/tags";
import { ok, successSchema } from "../lib/envelope";
import { createRouter, errorResponses, jsonContent } from "./openapi";
import { MAX_LIMIT } from "../lib/pagination";
import { TAG_MAX_LENGTH, tagPrefix } from "../lib/tag-rule";
import { publicReadCache } from "../middleware/read-cache";

const tagSchema = z
  .object({
    name: z.string().openapi({ description: "the tag as first spelled" }),
    key: z.string().openapi({ description: "what makes two spellings one tag (NFKC, case-folded, trimmed): `GET /stories?tag=` takes either" }),
    stories_count: z.number().int().openapi({ description: "listed stories carrying it" }),
  })
  .openapi("Tag");

const suggestRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/tags",
  tags: ["Stories"],
  summary: "Existing tags starting with a prefix (for autocomplete), in order, each with its count of stories",
  request: {
    query: z.object({
      prefix: z
        .string()
        .max(TAG_MAX_LENGTH)
        .default("")
        .openapi({ param: { name: "prefix", in: "query" }, description: "the tag's beginning, in any case or width (default: every tag)" }),
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .default(10)
        .transform((n) => Math.min(n, MAX_LIMIT))
        .openapi({ param: { name: "limit", in: "query" }, example: 10 }),
    }),
  },
  responses: { 200: jsonContent(successSchema(z.object({ tags: z.array(tagSchema) })), "Tags some listed story carries"), ...errorResponses() },
});

export const tagRoutes = createRouter().openapi(suggestRoute, async (c) => {
  const { prefix, limit } = c.req.valid("query");
  return ok(c, { tags: await suggestTags(c.get("db"), tagPrefix(prefix), limit) });
});
