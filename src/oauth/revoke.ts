import type { Context } from "hono";
import type { AppEnv } from "../context";

/**
 * Ends grants D1 has already ended (a retired bot's) in the OAuth library's store too: their refresh tokens stop
 * working at the token endpoint, and this isolate forgets the validations of their access tokens. The library is
 * loaded only when there is a grant to end, so a retire without one never evaluates it.
 */
export async function endLibraryGrants(c: Context<AppEnv>, grants: { id: string; actorId: string }[]) {
  if (!grants.length) return;
  const { forgetGrant, oauthApi } = await import("./servers");
  const api = oauthApi(c.get("config").publicOrigin, c.env, c.get("meter"));
  await Promise.allSettled(grants.map((g) => api.revokeGrant(g.id, g.actorId)));
  for (const g of grants) forgetGrant(g.id);
}
