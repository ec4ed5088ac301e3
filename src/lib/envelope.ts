import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ERROR_STATUS, type ErrorCode } from "./errors";

/** `{status:'success', data}`: the envelope of most responses. */
export const successSchema = <T extends z.ZodTypeAny>(data: T) => z.object({ status: z.literal("success"), data });

export const errorSchema = z
  .object({
    status: z.literal("error"),
    error: z.object({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]).openapi({ example: "VALIDATION_ERROR" }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
      request_id: z.string().optional().openapi({ description: "this request's id, as in the X-Request-Id header" }),
    }),
  })
  .openapi("Error");

export type ErrorBody = z.infer<typeof errorSchema>;

/** A write that succeeded: a 2xx, or the 303 See Other with which the web reader answers a form (src/web/). */
export const succeeded = (status: number) => status < 300 || status === 303;

export function ok<T, S extends ContentfulStatusCode = 200>(c: Context, data: T, status?: S) {
  return c.json({ status: "success" as const, data }, (status ?? 200) as S);
}
