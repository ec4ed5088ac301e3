import type { Context } from "hono";
import type { AppEnv } from "../context";
import { ApiError } from "../lib/errors";

/**
 * A browser says where the page that sends a request came from: only the site's own pages (`PUBLIC_ORIGIN`, or the
 * origin the request itself was sent to) may open the live stream or drive `/mcp`; clients that send no `Origin`
 * (bots, agent hosts, curl) pass. Anything else, `null` included, is 403 `FORBIDDEN` naming `what`.
 */
export function checkOrigin(c: Context<AppEnv>, what: string) {
  const origin = c.req.header("origin");
  if (origin === undefined || origin === c.get("config").publicOrigin || origin === new URL(c.req.url).origin) return;
  throw new ApiError("FORBIDDEN", `${what} is open to this site's own pages (and to clients that send no Origin)`);
}
