import { z } from "@hono/zod-openapi";

export const MAX_LIMIT = 100;

/** `limit` (1…, above 100 treated as 100) and `offset` (≥ 0) query parameters with a per-list default. */
export const pageQuery = (defaultLimit: number) =>
  z.object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .default(defaultLimit)
      .transform((n) => Math.min(n, MAX_LIMIT))
      .openapi({ param: { name: "limit", in: "query" }, example: defaultLimit }),
    offset: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .openapi({ param: { name: "offset", in: "query" }, example: 0 }),
  });

export const paginationSchema = z.object({
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
  has_more: z.boolean(),
});

export type Pagination = ReturnType<typeof pagination>;

export const pagination = (limit: number, offset: number, total: number) => ({
  limit,
  offset,
  total,
  has_more: offset + limit < total,
});

/** `true`/`false`/`1`/`0` in a query string, in any letter case (Python's requests writes `True`); anything else is a 400. */
export const queryBoolean = z
  .string()
  .transform((v) => v.toLowerCase())
  .pipe(z.enum(["true", "false", "1", "0"]))
  .transform((v) => v === "true" || v === "1");

/** A query parameter that may repeat (`?tag=a&tag=b`, any of them, at most `max`): a list, absent an empty one. */
export const queryList = <T extends z.ZodType>(item: T, max: number) => z.preprocess((v) => (v === undefined ? [] : [v].flat()), z.array(item).max(max));
