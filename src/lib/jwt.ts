import type { ActorType } from "./actor-type";
import { ApiError } from "./errors";
import { base64url, fromBase64url, hmacSha256, importHmacKey, timingSafeEqualBytes } from "./crypto";

export interface JwtClaims {
  sub: string;
  typ: ActorType;
  name: string;
  /** Integer seconds, as `exp` (several JWT libraries refuse a fractional date). */
  iat: number;
  exp: number;
  jti: string;
  /**
   * When the token was issued, in milliseconds (a claim of our own): a bot's key replaced within the second a token
   * was issued must still tell which came first (src/domain/standing/rule.ts). Absent from tokens signed before it existed.
   */
  iat_ms?: number;
}

const CLOCK_SKEW_SECONDS = 60;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const encodeJson = (value: unknown) => base64url(encoder.encode(JSON.stringify(value)));

/** Tokens verified in this isolate, kept at most this many: a repeat costs a Map look-up and the expiry check. */
const MAX_VERIFIED = 10_000;

/**
 * Per isolate, for the one signing secret in use: its imported key (importing it per request cost ~0.1 ms) and
 * the claims of tokens whose signature already checked out. A signature never stops matching, so a remembered
 * token is only checked for expiry again; the account's standing is not the token's business (checked elsewhere).
 */
let signer: { secret: string; key: CryptoKey | null; verified: Map<string, JwtClaims> } | null = null;

function signerFor(secret: string) {
  if (signer?.secret !== secret) signer = { secret, key: null, verified: new Map() };
  return signer;
}

/**
 * The signer's key, imported by the first request that needs it. The key is kept, never the import's promise: a
 * request never awaits another request's promise (docs/decisions.md, "Reads at the edge"); two first requests at
 * once each import one.
 */
async function keyOf(s: NonNullable<typeof signer>): Promise<CryptoKey> {
  s.key ??= await importHmacKey(s.secret);
  return s.key;
}

/** Signs a token: `iat` and `exp` in integer seconds, `iat_ms` the issue time to the millisecond. */
export async function signJwt(
  subject: { id: string; type: ActorType; name: string },
  secret: string,
  ttlSeconds: number,
  now = Date.now() / 1000,
): Promise<string> {
  const seconds = Math.floor(now);
  const claims: JwtClaims = {
    sub: subject.id,
    typ: subject.type,
    name: subject.name,
    iat: seconds,
    exp: seconds + ttlSeconds,
    jti: crypto.randomUUID(),
    iat_ms: Math.round(now * 1000),
  };
  const unsigned = `${encodeJson({ alg: "HS256", typ: "JWT" })}.${encodeJson(claims)}`;
  return `${unsigned}.${base64url(await hmacSha256(await keyOf(signerFor(secret)), unsigned))}`;
}

const invalid = (reason: string, message = "Invalid token") => new ApiError("AUTH_INVALID_TOKEN", message, { reason });

function decodePart(part: string): Record<string, unknown> {
  try {
    const value = JSON.parse(decoder.decode(fromBase64url(part)));
    if (value && typeof value === "object" && !Array.isArray(value)) return value;
  } catch {
    // fall through
  }
  throw invalid("malformed", "Token is malformed");
}

function checkClaims(payload: Record<string, unknown>, now: number): JwtClaims {
  const { sub, typ, name, iat, exp, iat_ms } = payload;
  if (typeof sub !== "string" || !["human", "bot", "admin"].includes(typ as string)) {
    throw invalid("bad_claims", "Token claims are invalid");
  }
  if (typeof exp !== "number") throw invalid("missing_exp", "Token has no expiry");
  if (typeof iat === "number" && iat > now + CLOCK_SKEW_SECONDS) throw invalid("future_iat", "Token is issued in the future");
  if (exp <= now) throw new ApiError("AUTH_EXPIRED_TOKEN", "Token has expired; log in again");
  const claims: JwtClaims = {
    sub,
    typ: typ as ActorType,
    name: typeof name === "string" ? name : "",
    iat: Number(iat ?? 0),
    exp,
    jti: String(payload.jti ?? ""),
  };
  if (typeof iat_ms === "number") claims.iat_ms = iat_ms;
  return claims;
}

/** Verifies an HS256 JWT; throws AUTH_INVALID_TOKEN (with details.reason) or AUTH_EXPIRED_TOKEN. */
export async function verifyJwt(token: string, secret: string, now = Math.floor(Date.now() / 1000)): Promise<JwtClaims> {
  const s = signerFor(secret);
  const known = s.verified.get(token);
  if (known) return checkClaims({ ...known }, now);
  const parts = token.split(".");
  if (parts.length !== 3) throw invalid("malformed", "Token is malformed");
  const [head, body, signature] = parts;
  const header = decodePart(head);
  if (header.alg !== "HS256") throw invalid("unsupported_alg", "Token algorithm is not accepted");
  let given: Uint8Array;
  try {
    given = fromBase64url(signature);
  } catch {
    throw invalid("malformed", "Token is malformed");
  }
  const expected = await hmacSha256(await keyOf(s), `${head}.${body}`);
  if (!timingSafeEqualBytes(given, expected)) throw invalid("bad_signature", "Token signature does not match");
  const claims = checkClaims(decodePart(body), now);
  if (s.verified.size >= MAX_VERIFIED) s.verified.clear();
  s.verified.set(token, claims);
  return claims;
}
