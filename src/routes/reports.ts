import { createRoute } from "@hono/zod-openapi";
import { auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { LIMIT_ERRORS, idempotencyParameter, limitsAndIdempotency } from "../middleware/limits";
import { ok, successSchema } from "../lib/envelope";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { reportBody, reportSchema } from "../schemas/reports";
import { fileReport } from "../usecases/reports";
import { authErrors } from "./schemas";

const reportResult = successSchema(reportSchema);

const fileRoute = createRoute({
  method: "post",
  path: "/reports",
  tags: ["Reports"],
  summary: "Report a segment, comment, story, branch or account to the moderators (201; 200 when it updates your open report on it)",
  description:
    "Any signed-in account may report. One open report per reporter and target: reporting the same target again while your report is " +
    "open replaces its reason and note (200, same id). The target must exist (404).",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("report")] as const,
  parameters: [idempotencyParameter],
  request: { body: jsonBody(reportBody) },
  responses: {
    201: jsonContent(reportResult, "Report filed"),
    200: jsonContent(reportResult, "Your open report on this target, updated"),
    ...errorResponses(...authErrors, "NOT_FOUND", ...LIMIT_ERRORS),
  },
});

export const reportRoutes = createRouter().openapi(fileRoute, async (c) => {
  const { created, report } = await fileReport(callerOf(c), c.req.valid("json"));
  return created ? ok(c, report, 201) : ok(c, report, 200);
});
