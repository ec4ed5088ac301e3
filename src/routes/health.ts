import { createRoute, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import packageJson from "../../package.json";
import { ApiError } from "../lib/errors";
import { createRouter, errorResponses, jsonContent } from "./openapi";
import { queryBoolean } from "../lib/pagination";

const healthRoute = createRoute({
  method: "get",
  path: "/health",
  tags: ["Health"],
  summary: "Liveness check; with deep=1 also D1 and the deployed version",
  security: [],
  request: {
    query: z.object({ deep: queryBoolean.optional().openapi({ param: { name: "deep", in: "query" }, description: "also check D1 (one trivial query)" }) }),
  },
  responses: {
    200: jsonContent(
      z.object({
        status: z.literal("healthy"),
        message: z.string(),
        version: z.object({ package: z.string(), migration: z.string().nullable() }).optional(),
        d1: z.object({ ok: z.literal(true), ms: z.number() }).optional(),
      }),
      "The service is up (with deep=1: and D1 answers)",
    ),
    ...errorResponses("SERVICE_UNAVAILABLE"),
  },
});

export const healthRoutes = createRouter().openapi(healthRoute, async (c) => {
  const message = "Storyloom API is running";
  if (!c.req.valid("query").deep) return c.json({ status: "healthy" as const, message }, 200);
  const started = performance.now();
  let migration: string | null;
  try {
    // One trivial query that also tells the migration level D1 is at.
    const [row] = await c.get("db").all<{ name: string | null }>(sql`SELECT (SELECT name FROM d1_migrations ORDER BY id DESC LIMIT 1) AS name`);
    migration = row?.name ?? null;
  } catch (err) {
    console.error(JSON.stringify({ request_id: c.get("requestId"), event: "health: D1 unreachable", error: (err as Error).message }));
    throw new ApiError("SERVICE_UNAVAILABLE", "D1 is unreachable");
  }
  const d1 = { ok: true as const, ms: Math.round((performance.now() - started) * 10) / 10 };
  return c.json({ status: "healthy" as const, message, version: { package: packageJson.version, migration }, d1 }, 200);
});
