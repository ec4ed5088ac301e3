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

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * A loopback host name (`localhost`, `127.0.0.1`, `[::1]`): the local machine. A site whose own origin is one is in
 * local development (`npm run dev`); the web reader's cookies drop `Secure` there.
 */
export const isLoopback = (hostname: string) => LOOPBACK.has(hostname);

/**
 * The host a request was sent to (its `Host`) must be the site's own, `PUBLIC_ORIGIN`'s: a page whose name an
 * attacker made resolve to this server (DNS rebinding) sends its own name, and its own `Origin` with it, which
 * `checkOrigin` alone takes for the site's. In local development any loopback name and port is the site's (a dev
 * server is reached as 127.0.0.1 or localhost alike). Anything else is 403 `FORBIDDEN` naming `what`.
 */
export function checkHost(c: Context<AppEnv>, what: string) {
  const own = new URL(c.get("config").publicOrigin);
  const host = (c.req.header("host") ?? new URL(c.req.url).host).toLowerCase();
  if (host === own.host || (isLoopback(own.hostname) && isLoopback(host.replace(/:\d*$/, "")))) return;
  throw new ApiError("FORBIDDEN", `${what} answers at ${own.origin} only`);
}
