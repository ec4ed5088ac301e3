/**
 * A strong ETag for a response body, computed from the text the handler already holds: its SHA-1 in hex. It changes
 * whenever the text does. WebCrypto's digest over the text's UTF-8 bytes: `node:crypto`'s `createHash` goes
 * through workerd's JavaScript Buffer and Hash wrappers (~0.25 ms for a 20 KB page in bench/PROFILE.md, ~0.22 ms
 * this way); a hash written in JavaScript read a page built by concatenation (a rope) character by character on
 * V8's slow path, over 1 ms.
 * Hashing a copy of the response stream instead (hono/etag's own way) cost a request ~0.3 ms.
 */
const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The strong ETag of these bytes. */
export async function bytesTag(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", bytes));
  let hex = "";
  for (const byte of digest) hex += HEX[byte];
  return `"${hex}"`;
}

/** A body as UTF-8 bytes with its strong ETag: one encoding serves the hash, the response and the micro-cache. */
export async function taggedBody(text: string): Promise<{ bytes: Uint8Array; etag: string }> {
  const bytes = encoder.encode(text);
  return { bytes, etag: await bytesTag(bytes) };
}

export const contentTag = async (text: string): Promise<string> => bytesTag(encoder.encode(text));
