import { createHash } from "node:crypto";

/**
 * A strong ETag for a response body, computed synchronously from the text the handler already holds: its SHA-1 in
 * hex. It changes whenever the text does. Native hashing takes any string as it is: a hash written in
 * JavaScript cost ~30 µs for a 20 KB page when the text was one flat string and over 1 ms when it was built by
 * concatenation (a rope, as pages are), which V8 reads character by character on its slow path.
 * Hashing a copy of the response stream instead (hono/etag's own way) cost a request ~0.3 ms (bench/PROFILE.md).
 */
export function contentTag(text: string): string {
  return `"${createHash("sha1").update(text).digest("hex")}"`;
}
