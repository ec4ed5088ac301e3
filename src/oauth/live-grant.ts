import type { Env } from "../env";
import type { D1Counter } from "../lib/meter";
import { oauthKv } from "./consistent-kv";

/**
 * Whether a token request names a live grant, read from the library's store as the library reads it (without
 * loading the library): a limit on failures never refuses such a request, so junk sent from a shared address (a
 * host's backend, made to exchange `?code=junk` by anyone who opens its callback) cannot lock out the people who
 * connect through it.
 */

/** A token's or code's id as the library stores it: SHA-256, hex. */
export async function tokenId(token: string) {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The parts of the library's grant record a live code or refresh token is checked against. */
interface GrantRecord {
  authCodeId?: string;
  authCodeWrappedKey?: string;
  refreshTokenId?: string;
  previousRefreshTokenId?: string;
  expiresAt?: number;
}

/** `userId:grantId:secret`, the shape of the library's codes and tokens; null for anything else. */
export function tokenParts(token: string | null | undefined) {
  const [userId, grantId, secret, ...rest] = (token ?? "").split(":");
  return userId && grantId && secret && !rest.length ? { userId, grantId } : null;
}

/** The grant a code or token names, when it exists and has not expired. */
async function liveGrant(env: Env, meter: D1Counter, credential: string | null): Promise<GrantRecord | null> {
  const parts = tokenParts(credential);
  if (!parts) return null;
  const grant = await oauthKv(env, meter).get<GrantRecord>(`grant:${parts.userId}:${parts.grantId}`, "json");
  return grant && (grant.expiresAt === undefined || grant.expiresAt * 1000 > Date.now()) ? grant : null;
}

/**
 * True for a bearer of a grant that lives (its access token may have expired: a host calls with it, is answered
 * 401, and refreshes). Such a call is neither counted as a failure on `/mcp` nor refused by its address limit.
 */
export const bearerOfLiveGrant = async (env: Env, meter: D1Counter, bearer: string) => (await liveGrant(env, meter, bearer)) !== null;

/**
 * True for an authorization-code request with the grant's unused code, a refresh with its current or previous
 * refresh token (a previous one is judged by the token endpoint: its lost answer, or the grant ended), or a
 * revocation (RFC 7009, no grant type) of a token of a live grant.
 */
export async function namesLiveGrant(env: Env, meter: D1Counter, form: URLSearchParams): Promise<boolean> {
  const grantType = form.get("grant_type");
  if (!grantType) return (await liveGrant(env, meter, form.get("token"))) !== null;
  const credential = grantType === "authorization_code" ? form.get("code") : grantType === "refresh_token" ? form.get("refresh_token") : null;
  const grant = await liveGrant(env, meter, credential);
  if (!credential || !grant) return false;
  const id = await tokenId(credential);
  if (grantType === "authorization_code") return id === grant.authCodeId && !!grant.authCodeWrappedKey;
  return id === grant.refreshTokenId || id === grant.previousRefreshTokenId;
}
