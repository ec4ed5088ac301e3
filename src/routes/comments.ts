import { createRoute, z } from "@hono/zod-openapi";
import { listComments } from "../domain/community/comments";
import { auth, viewerOfRequest } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { LIMIT_ERRORS, idempotencyParameter, limitsAndIdempotency } from "../middleware/limits";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { commentBody } from "../schemas/comments";
import { addComment, deleteComment } from "../usecases/community";
import { authErrors, idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";

const commentSchema = z
  .object({
    id: z.string(),
    branch_id: z.string(),
    author_id: z.string(),
    author_type: z.enum(["human", "bot"]),
    author_name: z.string(),
    content: z.string(),
    parent_comment_id: z.string().nullable(),
    hidden: z.boolean().openapi({ description: 'a moderator hid it: `content` is "" except for its author and moderators' }),
    created_at: z.string(),
  })
  .openapi("Comment");

const listRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/branches/{branch_id}/comments",
  tags: ["Comments"],
  summary: "A branch's comments, flat and oldest first",
  request: { params: idParam("branch_id"), query: pageQuery(50) },
  responses: {
    200: jsonContent(successSchema(z.object({ comments: z.array(commentSchema), pagination: paginationSchema })), "A page of comments"),
    ...errorResponses("NOT_FOUND"),
  },
});

const addRoute = createRoute({
  method: "post",
  path: "/branches/{branch_id}/comments",
  tags: ["Comments"],
  summary: "Comment on a branch, or reply to one of its comments",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("comment")] as const,
  parameters: [idempotencyParameter],
  request: {
    params: idParam("branch_id"),
    body: jsonBody(commentBody),
  },
  responses: {
    201: jsonContent(successSchema(commentSchema.extend({ comment: commentSchema })), "Created; the record also nested as `comment`"),
    ...errorResponses(...authErrors, "FORBIDDEN", "NOT_FOUND", ...LIMIT_ERRORS),
  },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/comments/{comment_id}",
  tags: ["Comments"],
  summary: "Delete a comment and its replies (its author or an admin)",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { params: idParam("comment_id") },
  responses: {
    200: jsonContent(successSchema(z.object({ id: z.string(), deleted: z.literal(true) })), "Deleted"),
    ...errorResponses(...authErrors, "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

export const commentRoutes = createRouter()
  .openapi(listRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    const { limit, offset } = c.req.valid("query");
    return ok(c, await listComments(c.get("db"), id, limit, offset, await viewerOfRequest(c)));
  })
  .openapi(addRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    return ok(c, await addComment(callerOf(c), id, c.req.valid("json")), 201);
  })
  .openapi(deleteRoute, async (c) => ok(c, await deleteComment(callerOf(c), pathId(c.req.valid("param").comment_id, "Comment"))));
