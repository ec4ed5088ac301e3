import type { Context } from "hono";
import type { AppEnv } from "../context";
import { endGrant } from "../domain/accounts/oauth-grants";
import { executionContextOf } from "../middleware/access-log";
import { RESOURCE_METADATA_PATH, TOKEN_PATH } from "./paths";
import { serveToken } from "./refresh";
import { forgetGrant, oauthEnv, oauthServers } from "./servers";

/**
 * The OAuth library's own endpoints, behind our request id, access log and services: the authorization
 * server's metadata, token (and revocation) and registration endpoints, and the resource's metadata at both the
 * path form (`/.well-known/oauth-protected-resource/mcp`, RFC 9728) and the root form (MCP 2025-11-25 clients try
 * it too). Each is answered on the site's own origin, as its issuer names it. The token endpoint refuses a
 * refresh token presented again after its rotation (src/oauth/refresh.ts).
 */
export function serveOAuth(c: Context<AppEnv>): Promise<Response> {
  const origin = c.get("config").publicOrigin;
  const url = new URL(c.req.url);
  const path = url.pathname.startsWith(RESOURCE_METADATA_PATH) ? `${RESOURCE_METADATA_PATH}/mcp` : url.pathname;
  const request = new Request(`${origin}${path}${url.search}`, c.req.raw);
  const { authorization, resource } = oauthServers(origin);
  const ctx = executionContextOf(c) ?? ({ waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext);
  const env = oauthEnv(c.env, c.get("meter"));
  if (path === `${RESOURCE_METADATA_PATH}/mcp`) return resource.fetch(request, env, ctx);
  if (path !== TOKEN_PATH) return authorization.fetch(request, env, ctx);
  return serveToken(request, env, {
    serve: () => authorization.fetch(request, env, ctx),
    end: async (userId, grantId) => {
      // D1 first, as a revoke on Connected apps: the next call is refused whatever KV still shows.
      await endGrant(c.env.DB, grantId, new Date().toISOString());
      forgetGrant(grantId);
      await authorization.getOAuthApi(env).revokeGrant(grantId, userId);
    },
  });
}
