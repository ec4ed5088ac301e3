import { createRoute, z } from "@hono/zod-openapi";
import { listReports } from "../domain/moderation/reports";
import { auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { moderatorsOnly } from "../middleware/moderators";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { REPORT_TARGETS, RESOLVE_ACTIONS, reportSchema, resolveBody } from "../schemas/reports";
import { resolveReport } from "../usecases/reports";
import { authErrors, idParam } from "./schemas";

/** A report as moderators see it: who filed it and how it was resolved. */
const moderatedReport = reportSchema
  .extend({
    reporter_id: z.string(),
    reporter_type: z.enum(["human", "bot"]),
    resolution: z.enum(RESOLVE_ACTIONS).nullable(),
    resolved_by: z.string().nullable(),
    resolution_note: z.string().nullable(),
    resolved_at: z.string().nullable(),
  })
  .openapi("ModeratedReport");

const queueItem = moderatedReport
  .extend({
    excerpt: z.string().nullable().openapi({
      description: "The reported text (a story: title and background; an account: its name), at most 200 characters and a …; null when the target is gone",
    }),
    target_gone: z.boolean().openapi({
      description: "The target was deleted since it was reported: nothing left to hide (suspend its author, or dismiss the report)",
    }),
    target_author_id: z.string().nullable().openapi({
      description: "Who answers for the target (author, owner, creator; the account itself): whom 'suspend' suspends, kept when the target is deleted",
    }),
    target_page: z.string().nullable().openapi({ description: "The web reader's page showing the target (a path on this site)" }),
    reporters_count: z.number().int().openapi({ description: "Distinct accounts that have reported this target (open and resolved reports)" }),
  })
  .openapi("ReportQueueItem");

const listRoute = createRoute({
  method: "get",
  path: "/admin/reports",
  tags: ["Admin"],
  summary: "The moderators' report queue: open reports oldest first (resolved ones newest resolved first)",
  security: bearerSecurity,
  middleware: [auth(), moderatorsOnly] as const,
  request: {
    query: pageQuery(50).extend({
      status: z
        .enum(["open", "resolved"])
        .default("open")
        .openapi({ param: { name: "status", in: "query" } }),
      target_type: z
        .enum(REPORT_TARGETS)
        .optional()
        .openapi({ param: { name: "target_type", in: "query" } }),
    }),
  },
  responses: {
    200: jsonContent(successSchema(z.object({ reports: z.array(queueItem), pagination: paginationSchema })), "A page of reports"),
    ...errorResponses(...authErrors, "FORBIDDEN"),
  },
});

const resolveRoute = createRoute({
  method: "post",
  path: "/admin/reports/{report_id}/resolve",
  tags: ["Admin"],
  summary: "Resolve a report: dismiss it, hide the reported item, or suspend the account behind it",
  description:
    "'hide' hides the reported segment, comment, story or branch (not an account: 400; one deleted since it was reported: 409); " +
    "'suspend' suspends the reported account, or the author (owner, creator) of the reported content, until restored (even once the " +
    "content is deleted). Every other open report on the same target is resolved with this one. The action, the reports and the audit " +
    "entry are written together. Nobody resolves a report about themselves or their own content (403 PERMISSION_DENIED).",
  security: bearerSecurity,
  middleware: [auth(), moderatorsOnly] as const,
  request: { params: idParam("report_id"), body: jsonBody(resolveBody) },
  responses: {
    200: jsonContent(successSchema(moderatedReport), "Resolved"),
    ...errorResponses(...authErrors, "FORBIDDEN", "PERMISSION_DENIED", "NOT_FOUND", "CONFLICT"),
  },
});

export const adminReportRoutes = createRouter()
  .openapi(listRoute, async (c) => {
    const { limit, offset, ...filter } = c.req.valid("query");
    return ok(c, await listReports(c.get("db"), filter, limit, offset));
  })
  .openapi(resolveRoute, async (c) => ok(c, await resolveReport(callerOf(c), pathId(c.req.valid("param").report_id, "Report"), c.req.valid("json"))));
