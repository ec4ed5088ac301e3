import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { TypedResponse } from "hono/types";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import { JsonText } from "./json-text";
import { taggedBody } from "./content-tag";
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
  return answer<T, S>(c, JSON.stringify({ status: "success", data }), status);
}

/** `data` with each field SQLite wrote as JSON (`JsonText`) typed as its value. */
type Spliced<T> = { [K in keyof T]: T[K] extends JsonText<infer V> ? V : T[K] };

/**
 * `ok` for data whose fields may be JSON text SQLite already wrote (`JsonText`, src/db/json-rows.ts): spliced in as
 * it is, so the rows it holds are never objects here. The text is what `ok` writes for the same values.
 */
export function okSpliced<T extends Record<string, unknown>>(c: Context, data: T) {
  let fields = "";
  for (const key in data) {
    const value = data[key];
    if (value === undefined) continue;
    fields += `${fields ? "," : ""}${JSON.stringify(key)}:${value instanceof JsonText ? value.text : JSON.stringify(value)}`;
  }
  return answer<Spliced<T>, 200>(c, `{"status":"success","data":{${fields}}}`);
}

async function answer<T, S extends ContentfulStatusCode>(c: Context, text: string, status?: S) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  let body: string | Uint8Array<ArrayBuffer> = text;
  if (isReadMethod(c.req.method)) {
    // A read is hashed for its ETag: its bytes are encoded once, for the hash, the response and the micro-cache.
    const tagged = await taggedBody(text);
    headers.etag = tagged.etag;
    body = tagged.bytes as Uint8Array<ArrayBuffer>;
    c.set("rendered", body);
  }
  return c.body(body, (status ?? 200) as S, headers) as unknown as Response & TypedResponse<JSONParsed<{ status: "success"; data: T }>, S, "json">;
}
