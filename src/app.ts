import type { Context, MiddlewareHandler } from "hono";
import { etag, RETAINED_304_HEADERS } from "hono/etag";
import { requestId } from "hono/request-id";
import { getPath } from "hono/utils/url";
import type { AppEnv } from "./context";
import type { Env } from "./env";
import { API_VERSION } from "./lib/api-version";
import { contentTag } from "./lib/content-tag";
import { refusalFirst } from "./db/metered";
import { ApiError } from "./lib/errors";
import { accessLog, liveAccessLog } from "./middleware/access-log";
import { apiCors } from "./middleware/cors";
import { limitBody } from "./middleware/body-limit";
import { configOf } from "./config";
import { cacheFirst, plainAnonymousGet } from "./middleware/cache-first";
import { renderError } from "./middleware/render-error";
import { createRouter } from "./routes/openapi";
import { describeMiddlewareHeaders } from "./lib/openapi-headers";
import { emptyReadCacheAfterWrites, keepDoorHeaders } from "./middleware/read-cache";
import { anonymousReadLimit } from "./middleware/read-limit";
import { servicesAndServerTiming } from "./middleware/services";
import { adminContentRoutes } from "./routes/admin-content";
import { adminAuditRoutes } from "./routes/admin-audit";
import { adminReportRoutes } from "./routes/admin-reports";
import { adminAccountRoutes } from "./routes/admin-accounts";
import { authRoutes } from "./routes/auth";
import { botRoutes } from "./routes/bots";
import { branchRoutes } from "./routes/branches";
import { commentRoutes } from "./routes/comments";
import { dashboardRoutes } from "./routes/dashboard";
import { exportRoutes } from "./routes/exports";
import { followRoutes } from "./routes/follows";
import { inboxRoutes } from "./routes/inbox";
import { docsRoutes } from "./routes/docs";
import { healthRoutes } from "./routes/health";
import { liveRoute, openLiveStream } from "./routes/live";
import { logRoutes } from "./routes/logs";
import { pinRoutes } from "./routes/pins";
import { reportRoutes } from "./routes/reports";
import { rewriteRoutes } from "./routes/rewrites";
import { voteRoutes } from "./routes/votes";
import { webhookRoutes } from "./routes/webhooks";
import { segmentRoutes } from "./routes/segments";
import { storyRoutes } from "./routes/stories";
import { tagRoutes } from "./routes/tags";
import { searchRoutes } from "./routes/search";
import { preferenceRoutes } from "./routes/preferences";
import { bookmarkRoutes } from "./routes/bookmarks";
import { summaryRoutes } from "./routes/summaries";
import { feedRoutes } from "./web/routes/feeds";
import { webRoutes } from "./web/app";
import { OAUTH_SERVER_PATHS, REGISTER_PATH, TOKEN_PATH } from "./oauth/paths";
import { oauthErrorShape } from "./middleware/oauth-errors";
import { mcpTokenFailureLimit, oauthRegistrationLimit, oauthTokenLimit } from "./middleware/subject-limits";

export const API_PREFIX = "/api/v1";
const WRITE_METHODS = ["POST", "PUT", "PATCH", "DELETE"];
/** The MCP endpoint and the agents' guide, at the origin's root. */
export const MCP_PATH = "/mcp";
export const GUIDE_PATH = "/llms.txt";

let documentOf: () => Promise<unknown> = () => {
  throw new Error("the API is not built yet");
};

/** The OpenAPI 3.1 document, as `GET /api/v1/openapi.json` serves it (scripts read it without a server). */
export const openApiDocument = () => documentOf();

/**
 * The MCP server's tools and prompt, named in the document's description from their own definitions (loaded with the
 * document, not at start-up: isolates that serve neither the document nor `/mcp` never evaluate them).
 */
async function mcpNames() {
  const [{ TOOLS }, { continueStoryPrompt }] = await Promise.all([import("./mcp/tools"), import("./mcp/prompts")]);
  const tools = TOOLS.map((t) => t.name);
  return `the tools ${tools.slice(0, -1).join(", ")} and ${tools.at(-1)}, and the prompt ${continueStoryPrompt.name}`;
}

function buildApi() {
  const api = createRouter();
  api.use("*", apiCors);
  // Each by the methods it concerns (a GET runs as HEAD too), so no request pays a step that would only pass it on.
  // Reads: strong ETags from the body's digest (they change exactly when the content does; If-None-Match gets 304),
  // and the anonymous read limit. Writes: the body's size limit, and the micro-cache emptied after a success.
  api.on("GET", "*", etag({ retainedHeaders: [...RETAINED_304_HEADERS, "access-control-allow-origin", "access-control-expose-headers"] }));
  api.on("GET", "*", anonymousReadLimit);
  api.on(WRITE_METHODS, "*", limitBody, emptyReadCacheAfterWrites);
  const resources = [
    healthRoutes,
    authRoutes,
    storyRoutes,
    tagRoutes,
    searchRoutes,
    preferenceRoutes,
    bookmarkRoutes,
    branchRoutes,
    exportRoutes,
    segmentRoutes,
    voteRoutes,
    commentRoutes,
    rewriteRoutes,
    pinRoutes,
    summaryRoutes,
    botRoutes,
    logRoutes,
    dashboardRoutes,
    webhookRoutes,
    adminContentRoutes,
    reportRoutes,
    adminReportRoutes,
    adminAuditRoutes,
    adminAccountRoutes,
    followRoutes,
    inboxRoutes,
  ];
  for (const routes of resources) api.route("/", routes);

  api.openAPIRegistry.registerPath(liveRoute);
  api.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A human or bot JWT, a human API token (slt_…), or a bot API key (slk_…)",
  });
  api.openAPIRegistry.registerComponent("securitySchemes", "apiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
  });
  let document: Promise<unknown> | undefined; // built once, on first use, after every route is registered
  const build = async () =>
    describeMiddlewareHeaders(
      api.getOpenAPI31Document({
        openapi: "3.1.0",
        info: {
          title: "Storyloom API",
          version: API_VERSION,
          description:
            "Humans and bots writing stories together.\n\n" +
            "AI agents can also join through MCP: a Streamable HTTP MCP server at `/mcp` on this origin (revisions 2025-11-25 and " +
            "2026-07-28; `Authorization: Bearer <credential>` with any credential this API accepts, or an OAuth 2.1 access token from this " +
            "origin's authorization server (`/.well-known/oauth-authorization-server`); without a credential it answers 401 with the " +
            `OAuth challenge, and anonymous reading is this API's, the web reader's and \`/llms.txt\`'s) with ${await mcpNames()}. ` +
            "The agents' guide, generated from this document and the configuration, is at `/llms.txt` (and `/api/v1/guide.md`).",
          // `identifier` (SPDX) is OpenAPI 3.1; the generator's typings know only 3.0's license object.
          license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } as { name: string },
        },
        servers: [{ url: API_PREFIX }],
      }),
    );
  documentOf = () =>
    (document ??= build().catch((err: unknown) => {
      document = undefined; // a failed build is not kept: the next request tries again
      throw err;
    }));
  api.get("/openapi.json", async (c) => c.json(await documentOf()));
  // The agents' guide (also at /llms.txt): Markdown generated from this document and the config.
  api.get("/guide.md", serveGuide);
  // The reference page: same-origin scripts only (static assets), under a strict CSP (src/routes/docs.ts).
  api.route("/docs", docsRoutes(`${API_PREFIX}/openapi.json`, "Storyloom API reference"));
  return api;
}

/** `/api/v1` and everything under it is the API's; any other path is the web reader's (or a static asset's). */
export const isApiPath = (path: string) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);

/** What every request goes through, whichever door: its id, its access-log line, and the services on `c.var`. */
function platform() {
  const app = createRouter();
  // Outermost, so every response (CORS preflights and unknown paths included) carries it. The id is ours: a new
  // UUID, or the caller's own X-Request-Id when Hono's rule finds it well formed (at most 255 of [A-Za-z0-9_=-]).
  // A `cf-ray` is never the id: the access log writes it as its own field, and only when well formed.
  app.use("*", requestId());
  app.notFound((c) => renderError(c, new ApiError("NOT_FOUND", `No route for ${c.req.method} ${new URL(c.req.url).pathname}`)));
  // A caller whose standing no D1 trip has checked yet is answered its own refusal first (src/db/metered.ts).
  app.onError(async (err, c) => renderError(c, await refusalFirst(c.get("db")?.$client, err)));
  return app;
}

function withServices(app: ReturnType<typeof createRouter>, options: { bookmarks: boolean } = { bookmarks: true }) {
  app.use("*", accessLog);
  app.use("*", servicesAndServerTiming(options));
  return app;
}

function createApiApp() {
  const app = platform();
  // The live stream before the API's middleware, which would rewrite its 101 (CORS, ETag, Server-Timing): it has
  // its own access-log line, and applies the read limit and the rest itself (src/routes/live.ts).
  app.get(`${API_PREFIX}/branches/:branch_id/live`, liveAccessLog, openLiveStream);
  return withServices(app).route(API_PREFIX, buildApi());
}

const passOn: MiddlewareHandler<AppEnv> = (_c, next) => next();

/** `/llms.txt`, the agents' guide: generated once per config from the OpenAPI document; ETag, no credential. */
async function serveGuide(c: Context<AppEnv>) {
  const { agentsGuide } = await import("./mcp/guide");
  const text = agentsGuide(await openApiDocument(), c.get("config"));
  return c.body(text, 200, { "content-type": "text/markdown; charset=utf-8", etag: await contentTag(text), "cache-control": "public, max-age=300" });
}

/**
 * The agents' door: `/mcp` (the MCP server, src/mcp/), `/llms.txt` (the guide) and OAuth's endpoints, outside `/api/v1` but behind
 * the same request id, access log and services. The MCP module (and the SDK in it) is imported on the first
 * `/mcp` request, so isolates that never serve one never evaluate it.
 */
function createAgentsApp() {
  // No client bookmark here: `/mcp` and the OAuth endpoints are POSTs on the primary, so a
  // call's standing (a revoked grant, a logout) is read where it was written, never on a replica a bookmark names.
  const app = withServices(platform(), { bookmarks: false });
  // A refused OAuth token is counted against its address after the answer; past the limit, 429 before any look-up.
  app.all(MCP_PATH, limitBody, mcpTokenFailureLimit, async (c) => {
    const { serveMcp } = await import("./mcp/route");
    return serveMcp(c);
  });
  app.get(GUIDE_PATH, etag(), anonymousReadLimit, serveGuide);
  // OAuth 2.1 for /mcp: the library's metadata, token and registration endpoints, loaded on first use. A
  // registration identical to a known public client's is answered before the limit, which it does not count.
  const sameRegistration: MiddlewareHandler<AppEnv> = async (c, next) => (await import("./oauth/registration")).sameRegistration(c, next);
  const limits: Record<string, MiddlewareHandler<AppEnv>[]> = { [REGISTER_PATH]: [sameRegistration, oauthRegistrationLimit], [TOKEN_PATH]: [oauthTokenLimit] };
  for (const path of OAUTH_SERVER_PATHS) {
    app.all(path, oauthErrorShape, limitBody, ...(limits[path] ?? [passOn]), async (c) => {
      const { serveOAuth } = await import("./oauth/door");
      return serveOAuth(c);
    });
  }
  return app;
}

/** The feeds before the pages: they are the same for every reader, so they take none of the pages' session and headers. */
function createWebApp() {
  return withServices(platform()).route("/", feedRoutes).route("/", webRoutes);
}

/**
 * The cache-first path's answer (at once, or once it bought a read lease), else the full path's: also when buying failed
 * (the binding threw), so the full path tries again and any error gets the envelope from `onError`.
 */
const orFullPath = (door: ReturnType<typeof cacheFirst> | undefined, full: () => Response | Promise<Response>) =>
  door instanceof Promise ? door.then((res) => res ?? full(), full) : (door ?? full());

/**
 * Two apps behind one prefix test, so an API request never runs the pages' middleware (sessions, CSP) and
 * each router holds only its own routes; a plain anonymous read the micro-cache holds is answered before either
 * (src/middleware/cache-first.ts). `request` is Hono's test entry (a path or URL and its init), kept for the tests.
 */
export function createApp() {
  const api = createApiApp();
  const web = createWebApp();
  const agents = createAgentsApp();
  const fetch = (request: Request, env?: Env, ctx?: ExecutionContext) => {
    const path = getPath(request);
    if (isApiPath(path)) return orFullPath(env && cacheFirst(request, env, ctx), () => api.fetch(request, env, ctx));
    if (path === MCP_PATH || path === GUIDE_PATH || OAUTH_SERVER_PATHS.has(path)) return agents.fetch(request, env, ctx);
    return orFullPath(env && cacheFirst(request, env, ctx, "web"), () => pageOrFeed(request, env, ctx));
  };
  /** A page or a feed down the full path; an anonymous hit's headers are kept for the cache-first path's next ones. */
  const pageOrFeed = async (request: Request, env?: Env, ctx?: ExecutionContext) => {
    const res = await web.fetch(request, env, ctx);
    // A miss (most full-path answers) costs one header look-up here; only a hit asks whether the request was plain.
    if (env && res.headers.get("x-read-cache") === "hit" && plainAnonymousGet(request, "web")) keepDoorHeaders(request.url, res, configOf(env).readCacheMs);
    return res;
  };
  const request = (input: RequestInfo | URL, init?: RequestInit, env?: Env, ctx?: ExecutionContext) => {
    if (input instanceof Request) return fetch(init ? new Request(input, init) : input, env, ctx);
    const url = String(input);
    return fetch(new Request(/^https?:\/\//.test(url) ? url : `http://localhost${url}`, init), env, ctx);
  };
  return { fetch, request };
}

export const app = createApp();
