import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { apiErrorIn } from "../lib/errors";

/**
 * The OAuth library's endpoints answer every error as OAuth clients read one (`{error, error_description}`, RFC
 * 6749 §5.2), ours too: a limit's 429 is `temporarily_unavailable` with its `Retry-After` (the library's own advice
 * for a 429; an MCP client then keeps its tokens and tries again later, where an error it cannot parse makes it
 * start a new sign-in), any other of ours `invalid_request` (4xx) or `server_error`.
 */
export const oauthErrorShape: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (!c.error) return;
  const ours = apiErrorIn(c.error);
  const status = c.res.status;
  const error = status === 429 ? "temporarily_unavailable" : status < 500 ? "invalid_request" : "server_error";
  const headers = new Headers(c.res.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  const body = JSON.stringify({ error, error_description: ours && status < 500 ? ours.message : "Internal server error" });
  c.res = undefined as unknown as Response; // Hono would otherwise copy the envelope's headers over again
  c.res = new Response(body, { status, headers });
};
