import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { TypedResponse } from "hono/types";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import { contentTag } from "./content-tag";
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

/** A read: GET, or HEAD (which Hono serves as a GET). */
export const isReadMethod = (method: string) => method === "GET" || method === "HEAD";

/**
 * `{status:'success', data}` as JSON, serialized once: a read also gets its strong ETag from the text here (the
 * etag middleware then only compares), and the text is kept on `c.var.rendered` for the micro-cache.
 */
export function ok<T, S extends ContentfulStatusCode = 200>(c: Context, data: T, status?: S) {
  const text = JSON.stringify({ status: "success", data });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (isReadMethod(c.req.method)) {
    headers.etag = contentTag(text);
    c.set("rendered", text);
  }
  return c.body(text, (status ?? 200) as S, headers) as unknown as Response & TypedResponse<JSONParsed<{ status: "success"; data: T }>, S, "json">;
}
