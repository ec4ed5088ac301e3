import { type PathVersion, pathBook, pathVersion } from "../domain/export/export";
import { epubOf } from "../domain/export/epub";
import { markdownOf } from "../domain/export/markdown";
import type { Viewer } from "../domain/shared/visibility";
import { contentTag } from "../lib/content-tag";
import type { Guest } from "./caller";

/**
 * A branch's reading path as a file to take away, EPUB or Markdown, as the viewer may read it.
 *
 * Why two round trips: a copy's version (the story, the branch, the path's length and its hidden segments, with whom
 * they are shown to) is read first, without any text, so a reader who has this copy (`If-None-Match`) gets a 304 and
 * one whose copy any other reader has fetched gets the bytes the cache of exports keeps, both without reading the
 * path's text or building the file. Only a new copy reads the whole path, in its own round trip with the version's
 * statements again, so the ETag it is sent with is its own even when a segment landed in between.
 */

export type ExportFormat = "epub" | "md";

const RENDER = { epub: epubOf, md: markdownOf } satisfies Record<ExportFormat, unknown>;

/** How long the cache of exports keeps a copy: its address holds its version, so this bounds only its storage. */
const CACHED_SECONDS = 7 * 86_400;

export interface PathExport {
  etag: string;
  /** The copy every reader of the branch gets (it holds no hidden text): a shared cache may keep it. */
  shared: boolean;
  /** What to name the file: the story's title, then the branch's when it is not the main line. */
  title: string;
  /** The file; null when the reader has this copy already (`If-None-Match`). */
  body: ReadableStream<Uint8Array> | null;
  /** Whether the bytes came from the cache of exports. */
  cached: boolean;
}

const tagOf = (format: ExportFormat, origin: string, version: PathVersion) => contentTag(`${format}\n${origin}\n${version.key}`);

/** `If-None-Match` names this ETag (or is `*`); weak tags compare by their value, as hono/etag's do. */
const matches = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined && (ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((t) => t.trim().replace(/^W\//, "") === etag));

const titleOf = ({ story, branch }: PathVersion) => (branch.isMain ? story.title : `${story.title} - ${branch.title}`);

/** Where the cache of exports keeps a shared copy: an address no route serves, holding the copy's version. */
const cacheKey = (origin: string, id: string, format: ExportFormat, etag: string) => `${origin}/exports/${id}/${etag.replace(/"/g, "")}.${format}`;

/** The viewer's copy of the branch's path in `format` (404 when the branch is hidden from them). */
export async function exportPath(
  guest: Pick<Guest, "db" | "config" | "background">,
  id: string,
  format: ExportFormat,
  viewer: Viewer,
  ifNoneMatch?: string,
): Promise<PathExport> {
  const origin = guest.config.publicOrigin;
  const version = await pathVersion(guest.db, id, viewer);
  const etag = await tagOf(format, origin, version);
  const known = { etag, shared: version.shared, title: titleOf(version), cached: false };
  if (matches(ifNoneMatch, etag)) return { ...known, body: null };
  if (version.shared) {
    const hit = await caches.default.match(cacheKey(origin, id, format, etag));
    if (hit?.body) return { ...known, body: hit.body, cached: true };
  }
  const book = await pathBook(guest.db, id, viewer);
  const made = { etag: await tagOf(format, origin, book.version), shared: book.version.shared, title: titleOf(book.version), cached: false };
  const body = RENDER[format](book, origin);
  if (!made.shared) return { ...made, body };
  // One copy to the reader, one to the cache (after the answer; a cache that fails only costs the next reader a build).
  const [theirs, kept] = body.tee();
  const stored = new Response(kept, { headers: { "cache-control": `public, max-age=${CACHED_SECONDS}` } });
  await guest.background(caches.default.put(cacheKey(origin, id, format, made.etag), stored).catch(() => undefined));
  return { ...made, body: theirs };
}
