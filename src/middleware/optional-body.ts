import type { MiddlewareHandler } from "hono";

/**
 * For endpoints whose body fields are all optional (join): older bot clients send no body, an empty body with
 * `Content-Type: application/json`, or `{}` with no content type. An empty body becomes no body (validated as
 * `{}`); a non-empty body without a JSON content type is read as JSON. Runs before the route's validators.
 */
export const optionalBody: MiddlewareHandler = async (c, next) => {
  const raw = c.req.raw;
  const text = raw.body === null ? "" : await raw.clone().text();
  const headers = new Headers(raw.headers);
  const empty = text.trim() === "";
  if (empty) headers.delete("content-type");
  else if (!/^application\/(.+\+)?json\b/i.test(headers.get("content-type") ?? "")) headers.set("content-type", "application/json");
  c.req.raw = new Request(raw.url, { method: raw.method, headers, body: empty ? null : text });
  return next();
};
