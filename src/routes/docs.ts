import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../context";

/**
 * The interactive API reference at /api/v1/docs, served entirely by this Worker: the page below, the Scalar
 * bundle and its start-up script from the static assets (`public/api-reference/`, copied from the pinned
 * `@scalar/api-reference` package by scripts/copy-assets.mjs), and the OpenAPI document. No CDN, no inline script.
 */
export const REFERENCE_SCRIPTS = ["/api-reference/standalone.js", "/api-reference/init.js"] as const;

/**
 * Only this origin. Scripts: same-origin files only. Styles: the bundle injects <style> elements at run time
 * whose text it builds from the theme (and the UMD build has no nonce support), so style-src needs
 * 'unsafe-inline'; styles cannot run code. Images may be data: URIs (icons, the "Try it" client's previews).
 */
export const DOCS_CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

export function docsRoutes(documentUrl: string, title: string) {
  const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeAttr(title)}</title>
  </head>
  <body>
    <div id="app" data-url="${escapeAttr(documentUrl)}"></div>
${REFERENCE_SCRIPTS.map((src) => `    <script src="${src}"></script>`).join("\n")}
  </body>
</html>
`;
  const docs = new Hono<AppEnv>();
  docs.get("/", secureHeaders({ contentSecurityPolicy: DOCS_CSP, xContentTypeOptions: true }), (c) => c.html(page));
  return docs;
}
