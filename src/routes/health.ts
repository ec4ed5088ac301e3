import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, jsonContent } from "../lib/openapi";

const healthRoute = createRoute({
  method: "get",
  path: "/health",
  tags: ["Health"],
  summary: "Liveness check",
  responses: {
    200: jsonContent(z.object({ status: z.literal("healthy"), message: z.string() }), "The service is up"),
  },
});

export const healthRoutes = createRouter().openapi(healthRoute, (c) =>
  c.json({ status: "healthy" as const, message: "Storyloom API is running" }, 200),
);
