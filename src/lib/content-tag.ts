/**
 * A strong ETag for a response body, computed synchronously from the text the handler already holds: cyrb53's
 * two 32-bit lanes (both kept: 64 bits) over its UTF-16 code units, seeded with its length. It changes whenever the text
 * does (two versions of one resource collide with a chance of about 1 in 2^64) and guards no secret, so a fast
 * non-cryptographic hash serves: hashing a copy of the response stream with SHA-1 cost a request ~0.3 ms of CPU
 * (bench/PROFILE.md).
 */
export function contentTag(text: string): string {
  let h1 = 0xdeadbeef ^ text.length;
  let h2 = 0x41c6ce57 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0");
  return `"${hex(h2)}${hex(h1)}"`;
}
