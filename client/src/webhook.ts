/**
 * Verifying a webhook delivery: `X-Service-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`, keyed
 * with the UTF-8 bytes of the bot's webhook secret, `X-Service-Timestamp` in unix seconds. WebCrypto only, so it
 * runs in Node ≥ 20, browsers and Workers; the MAC is checked with `crypto.subtle.verify` (constant time).
 * Only the timestamp and the body are signed, so the event and the delivery id are read from the body
 * (`event`, `delivery_id`), never from the unsigned `X-Service-Event` and `X-Service-Delivery` headers.
 */

export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Oldest accepted timestamp, in seconds before now (also the furthest ahead). Default 300. */
  toleranceSeconds?: number;
  /** The current time in ms (tests). */
  now?: number;
}

export type VerifyResult =
  | { ok: true; event: string; deliveryId: string; timestamp: number; body: string }
  | { ok: false; reason: "missing_headers" | "bad_timestamp" | "stale_timestamp" | "bad_signature" | "bad_body" };

const encoder = new TextEncoder();

function header(headers: HeadersLike, name: string): string | null {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name.toLowerCase());
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === "string") return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  const out = new Uint8Array(new ArrayBuffer(32));
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** The signed body's `event` and `delivery_id`; null when it is not a JSON object naming both. */
function signedNames(text: string): { event: string; deliveryId: string } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const { event, delivery_id } = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
  return typeof event === "string" && typeof delivery_id === "string" ? { event, deliveryId: delivery_id } : null;
}

/**
 * Checks a delivery. Pass the body exactly as received (before any JSON parsing). Returns `ok: false` with a
 * reason for a missing header, a timestamp more than `toleranceSeconds` (5 minutes) away from now, or a
 * signature that does not match, or a signed body that does not name its `event` and `delivery_id`; `ok: true` with
 * the body text otherwise. `event` and `deliveryId` come from the signed body (a replay cannot change them by
 * changing headers): drop repeats by `deliveryId`.
 */
export async function verifyWebhook(
  secret: string,
  headers: HeadersLike,
  rawBody: string | Uint8Array | ArrayBuffer,
  options: VerifyOptions = {},
): Promise<VerifyResult> {
  const ts = header(headers, "X-Service-Timestamp");
  const sig = header(headers, "X-Service-Signature");
  if (!ts || !sig) return { ok: false, reason: "missing_headers" };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: "bad_timestamp" };
  const timestamp = Number(ts);
  const now = (options.now ?? Date.now()) / 1000;
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: "stale_timestamp" };
  const mac = sig.startsWith("sha256=") ? hexToBytes(sig.slice(7)) : null;
  if (!mac) return { ok: false, reason: "bad_signature" };
  const body = bytesOf(rawBody);
  const prefix = encoder.encode(`${ts}.`);
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix);
  message.set(body, prefix.length);
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  if (!(await crypto.subtle.verify("HMAC", key, mac, message))) return { ok: false, reason: "bad_signature" };
  const text = typeof rawBody === "string" ? rawBody : new TextDecoder().decode(body);
  const names = signedNames(text);
  return names ? { ok: true, ...names, timestamp, body: text } : { ok: false, reason: "bad_body" };
}
