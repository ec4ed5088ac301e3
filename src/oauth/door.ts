import type { Context } from "hono";
import type { AppEnv } from "../context";
import { executionContextOf } from "../middleware/access-log";
import { RESOURCE_METADATA_PATH } from "./paths";
import { oauthEnv, oauthServers } from "./servers";

/**
 * The OAuth library's own endpoints (issue 57), behind our request id, access log and services: the authorization
 * server's metadata, token (and revocation) and registration endpoints, and the resource's metadata at both the
 * path form (`/.well-known/oauth-protected-resource/mcp`, RFC 9728) and the root form (MCP 2025-11-25 clients try
 * it too). Each is answered on the site's own origin, as its issuer names it.
 */
export function serveOAuth(c: Context<AppEnv>): Promise<Response> {
  const origin = c.get("config").publicOrigin;
  const url = new URL(c.req.url);
  const path = url.pathname.startsWith(RESOURCE_METADATA_PATH) ? `${RESOURCE_METADATA_PATH}/mcp` : url.pathname;
  const request = new Request(`${origin}${path}${url.search}`, c.req.raw);
  const { authorization, resource } = oauthServers(origin);
  const ctx = executionContextOf(c) ?? ({ waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext);
  return (path === `${RESOURCE_METADATA_PATH}/mcp` ? resource : authorization).fetch(request, oauthEnv(c.env, c.get("meter")), ctx);
}
