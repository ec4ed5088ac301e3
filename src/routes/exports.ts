import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../context";
import type { Viewer } from "../domain/shared/visibility";
import { attachment } from "../lib/disposition";
import { pathId } from "../lib/ids";
import { viewerOfRequest } from "../middleware/auth";
import { guestOf } from "../middleware/caller";
import { type ExportFormat, exportPath } from "../usecases/exports";
import { createRouter, errorResponses } from "./openapi";
import { idParam } from "./schemas";

const CONTENT_TYPES: Record<ExportFormat, string> = { epub: "application/epub+zip", md: "text/markdown; charset=utf-8" };

/**
 * The viewer's copy of a branch's path as a download, for the API and the web reader alike (each door says who the
 * viewer is): 304 when `If-None-Match` names it, else the file under its ETag, named after the story (and branch).
 * A copy with hidden text in it is the viewer's own: `private`.
 */
export async function exportResponse(c: Context<AppEnv>, id: string, format: ExportFormat, viewer: Viewer): Promise<Response> {
  const file = await exportPath(guestOf(c), id, format, viewer, c.req.header("if-none-match"));
  const headers = { ETag: file.etag, "Cache-Control": file.shared ? "no-cache" : "private, no-cache" };
  if (!file.body) return c.body(null, 304, headers);
  return c.body(file.body, 200, {
    ...headers,
    "Content-Type": CONTENT_TYPES[format],
    "Content-Disposition": attachment(file.title, format),
    "x-export-cache": file.cached ? "hit" : "miss",
  });
}

const binary = (type: string, description: string) => ({
  content: { [type]: { schema: z.string().openapi({ type: "string", format: "binary" }) } },
  headers: z.object({
    "Content-Disposition": z.string().openapi({ description: "`attachment`, the file named after the story: `filename` in ASCII, `filename*` in UTF-8" }),
    "Cache-Control": z.string().openapi({ description: "`no-cache`; `private, no-cache` for a copy with hidden text in it (its reader's own)" }),
    "x-export-cache": z.enum(["hit", "miss"]).openapi({ description: "`hit` when the bytes came from the cache of exports" }),
  }),
  description,
});

const description = (what: string) =>
  `The branch's whole reading path (each ancestor's segments up to the fork, then the branch's own), ${what}: the story's title, ` +
  "its background as a foreword, its rating and warnings, who wrote it and every author of the path (bots marked), then a chapter per fork " +
  "crossed and per 50 segments (the path page's pages), in the story's language. Hidden segments are left out, except for those who may " +
  "read them (their authors, moderators, admins: send a credential). A file named after the story (`Content-Disposition`, with " +
  "`filename*` in UTF-8); its ETag changes with the path's last segment, a hide or restore on it, and the story's record, and " +
  "`If-None-Match` gets 304 without the path being read. `x-export-cache: hit` when the bytes came from the cache of exports.";

const epubRoute = createRoute({
  method: "get",
  path: "/branches/{branch_id}/export.epub",
  tags: ["Branches"],
  summary: "A branch's reading path as an EPUB 3 book",
  description: description("as an EPUB 3 book (a table of contents, one XHTML document per chapter)"),
  request: { params: idParam("branch_id") },
  responses: { 200: binary("application/epub+zip", "The EPUB"), ...errorResponses("NOT_FOUND") },
});

const markdownRoute = createRoute({
  method: "get",
  path: "/branches/{branch_id}/export.md",
  tags: ["Branches"],
  summary: "A branch's reading path as Markdown",
  description: description("as one Markdown (CommonMark) document, the text people wrote escaped to read as typed"),
  request: { params: idParam("branch_id") },
  responses: { 200: binary("text/markdown", "The Markdown"), ...errorResponses("NOT_FOUND") },
});

export const exportRoutes = createRouter()
  .openapi(epubRoute, async (c) => exportResponse(c, pathId(c.req.valid("param").branch_id, "Branch"), "epub", await viewerOfRequest(c)))
  .openapi(markdownRoute, async (c) => exportResponse(c, pathId(c.req.valid("param").branch_id, "Branch"), "md", await viewerOfRequest(c)));
