import { OpenAPIHono } from "@hono/zod-openapi";
import type { z } from "@hono/zod-openapi";
import type { AppEnv } from "../context";
import { ERROR_STATUS, type ErrorCode } from "../lib/errors";
import { errorSchema } from "../lib/envelope";
import { defaultHook } from "../lib/validation";

export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook });
}

export const jsonContent = <T extends z.ZodTypeAny>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

/** A required JSON request body: a missing or non-JSON body is validated (and refused) like an empty one. */
export const jsonBody = <T extends z.ZodTypeAny>(schema: T) => ({
  content: { "application/json": { schema } },
  required: true,
});

/** A JSON request body whose fields are all optional: it may be absent (use with the `optionalBody` middleware). */
export const optionalJsonBody = <T extends z.ZodTypeAny>(schema: T) => ({
  content: { "application/json": { schema } },
  required: false,
});

/** Error responses for a route, grouped by status, listing the codes each may carry. */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ["VALIDATION_ERROR", ...codes] as ErrorCode[]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].map(([status, list]) => [status, jsonContent(errorSchema, [...new Set(list)].join(", "))]));
}

export const bearerSecurity: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
