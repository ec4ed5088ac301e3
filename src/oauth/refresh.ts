import { OAuthError, type TokenExchangeCallbackOptions } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env";
import { libraryJson } from "./answers";
import { tokenId, tokenParts } from "./live-grant";
import { GRANT_SECONDS } from "./paths";

/**
 * Refresh-token reuse detection (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2) over the library, which keeps a grant's
 * previous refresh token valid forever: whoever held an old one could refresh again and again, each time killing
 * the real client's current token. Here a rotated refresh token is answered once more only within
 * REFRESH_GRACE_SECONDS of its rotation (a client that lost the answer), and then with the very answer it lost, so
 * the real client's tokens live on; after that, presenting it ends the whole grant (its tokens in the library, its
 * record in D1), as the token has leaked or the client is broken.
 *
 * The library authenticates the client and checks the token before it asks `tokenExchangeCallback`
 * (`refreshVerdict`), so that is where the verdict is given: pass (the current token: the library rotates it),
 * `invalid_grant` (a reuse: the library then revokes the grant) or the lost answer (thrown past the library as a
 * `Replay`, as the callback cannot answer otherwise). What the callback cannot see, the presented token, is handed
 * to it through the request's own `env` object (`presentedIn`).
 */

/** How long a rotated refresh token is still answered (with the answer it got): a lost response, a retry. */
export const REFRESH_GRACE_SECONDS = 30;
/** Rotated tokens remembered per grant (their hashes' first 16 hex digits): older ones are only refused, not caught. */
const ROTATED_KEPT = 200;

interface Presented {
  /** The token's id as the library stores it (SHA-256, hex). */
  id: string;
  token: string;
  userId: string;
  grantId: string;
  /** Set once the verdict is a reuse: the grant is ended in D1 after the library's answer. */
  reused: boolean;
}

/** The last rotation of a grant's refresh token and the tokens rotated before it. */
interface Rotation {
  last: { id: string; at: number; sealed: string };
  rotated: string[];
}

/** A token answer (RFC 6749 §5.1) as the library gave it, with when its access token expires. */
type Answer = Record<string, unknown> & { expires_at: number };

const presentedIn = new WeakMap<object, Presented>();
const short = (id: string) => id.slice(0, 16);
const rotationKey = (p: Pick<Presented, "userId" | "grantId">) => `rotation:${p.userId}:${p.grantId}`;

/** Thrown by the callback to answer the lost answer, past the library (which would otherwise rotate again). */
class Replay {
  constructor(readonly answer: Answer) {}
}

/** The key that seals a rotation's answer: from the rotated token itself, so only its holder can read it back. */
async function sealingKey(token: string) {
  const raw = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`storyloom refresh answer\u0000${token}`));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

async function seal(token: string, answer: Answer): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await sealingKey(token), new TextEncoder().encode(JSON.stringify(answer)));
  return btoa(String.fromCharCode(...iv, ...new Uint8Array(sealed)));
}

async function unseal(token: string, sealed: string): Promise<Answer | null> {
  try {
    const bytes = Uint8Array.from(atob(sealed), (ch) => ch.charCodeAt(0));
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12) }, await sealingKey(token), bytes.slice(12));
    return JSON.parse(new TextDecoder().decode(plain)) as Answer;
  } catch {
    return null;
  }
}

const readRotation = (kv: KVNamespace, p: Presented) => kv.get<Rotation>(rotationKey(p), "json");

/**
 * The library's `tokenExchangeCallback`: for a refresh, the verdict on the presented token (the library already
 * found it to be the grant's current or previous one, for this client). Anything else passes.
 */
export async function refreshVerdict(options: TokenExchangeCallbackOptions<Env> & { env: Env }): Promise<void> {
  if (options.grantType !== "refresh_token") return;
  const presented = presentedIn.get(options.env);
  if (!presented) return;
  const kv = options.env.OAUTH_KV;
  const grant = await kv.get<{ refreshTokenId?: string }>(`grant:${presented.userId}:${presented.grantId}`, "json");
  if (grant?.refreshTokenId === presented.id) return;
  const rotation = await readRotation(kv, presented);
  if (rotation?.last.id === presented.id && Date.now() - rotation.last.at <= REFRESH_GRACE_SECONDS * 1000) {
    const answer = await unseal(presented.token, rotation.last.sealed);
    if (answer) throw new Replay(answer);
  }
  presented.reused = true;
  throw new OAuthError("invalid_grant", { description: "This refresh token was already used; the connection is ended. Sign in again." });
}

/** Remembers a rotation: when, the answer it got (sealed with the rotated token), and the tokens rotated before. */
async function recordRotation(kv: KVNamespace, presented: Presented, body: Record<string, unknown>) {
  const now = Date.now();
  const answer: Answer = { ...body, expires_at: Math.floor(now / 1000) + Number(body.expires_in ?? 0) };
  const earlier = (await readRotation(kv, presented))?.rotated ?? [];
  const rotation: Rotation = {
    last: { id: presented.id, at: now, sealed: await seal(presented.token, answer) },
    rotated: [short(presented.id), ...earlier.filter((id) => id !== short(presented.id))].slice(0, ROTATED_KEPT),
  };
  // A grant lives GRANT_SECONDS from its approval at most, so its record never needs to outlive that.
  await kv.put(rotationKey(presented), JSON.stringify(rotation), { expirationTtl: GRANT_SECONDS });
}

/** The lost answer again, with its access token's remaining life. */
function replayed(answer: Answer, request: Request): Response {
  const { expires_at, ...body } = answer;
  return libraryJson(JSON.stringify({ ...body, expires_in: Math.max(0, expires_at - Math.floor(Date.now() / 1000)) }), 200, request);
}

/** The refresh token a token request presents, when it is one of our shape (`userId:grantId:secret`). */
async function presentedToken(request: Request): Promise<Presented | null> {
  if (request.method !== "POST" || !/^application\/x-www-form-urlencoded\b/i.test(request.headers.get("content-type") ?? "")) return null;
  const form = new URLSearchParams(new TextDecoder().decode(await request.clone().arrayBuffer()));
  const token = form.get("refresh_token");
  if (form.get("grant_type") !== "refresh_token" || !token) return null;
  const parts = tokenParts(token);
  return parts && { id: await tokenId(token), token, ...parts, reused: false };
}

/** What the token endpoint does around the check: the library's answer, and ending a grant everywhere. */
export interface TokenHooks {
  /** The library's answer to the request. */
  serve: () => Promise<Response>;
  /** Ends the grant: in the library's store and in D1 (the standing statement then refuses its access tokens). */
  end: (userId: string, grantId: string) => Promise<void>;
}

/**
 * The token endpoint with reuse detection: the library answers, and a refresh it answered is remembered. A token
 * rotated longer ago than the library's one previous token is refused by the library (`invalid_grant`); if this
 * grant's record knows it, it is a reuse too, and the grant is ended.
 */
export async function serveToken(request: Request, env: Env, hooks: TokenHooks): Promise<Response> {
  const presented = await presentedToken(request);
  if (!presented) return hooks.serve();
  presentedIn.set(env, presented);
  let res: Response;
  try {
    res = await hooks.serve();
  } catch (err) {
    if (err instanceof Replay) return replayed(err.answer, request);
    throw err;
  }
  if (res.status === 200) {
    // The library has rotated: its answer goes out even if the record cannot be written (the old token, sent again,
    // is then taken for a reuse), as a 500 would lose the client its only current token.
    await recordRotation(env.OAUTH_KV, presented, await res.clone().json()).catch((err) =>
      console.error(JSON.stringify({ at: new Date().toISOString(), event: "refresh rotation not recorded", error: String(err) })),
    );
    return res;
  }
  if (
    res.status === 400 &&
    !presented.reused &&
    (
      await res
        .clone()
        .json<{ error?: string }>()
        .catch(() => ({}) as { error?: string })
    ).error === "invalid_grant"
  ) {
    presented.reused = (await readRotation(env.OAUTH_KV, presented))?.rotated.includes(short(presented.id)) ?? false;
  }
  // The library already deleted the grant when the verdict was its own `invalid_grant`; deleting again is harmless.
  if (presented.reused) await hooks.end(presented.userId, presented.grantId);
  return res;
}
