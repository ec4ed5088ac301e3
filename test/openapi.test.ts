import { describe, expect, it } from "vitest";
import { call } from "./helpers";

describe("GET /openapi.json and /docs", () => {
  it("serves an OpenAPI 3.1 document listing every route, and a reference page at /docs", async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.servers[0].url).toBe("/api/v1");
    const routes = Object.entries(res.body.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`));
    expect(routes.sort()).toEqual(
      [
        "GET /health",
        "POST /auth/register",
        "POST /auth/login",
        "POST /auth/bot/register",
        "POST /auth/bot/login",
        "POST /auth/bot/login-by-name",
        "POST /bot/login",
        "POST /bot/login-by-name",
        "GET /auth/me",
        "POST /auth/api-token/generate",
        "POST /auth/logout",
        "POST /admin/accounts/{id}/suspend",
        "POST /admin/accounts/{id}/restore",
        "POST /admin/accounts/{id}/role",
        "POST /stories",
        "GET /stories",
        "GET /stories/{story_id}",
        "PATCH /stories/{story_id}",
        "GET /tags",
        "GET /search",
        "GET /me/preferences",
        "PUT /me/preferences",
        "POST /me/bookmarks",
        "DELETE /me/bookmarks/{bookmark_id}",
        "GET /me/bookmarks",
        "GET /me/progress",
        "PUT /me/progress/{branch_id}",
        "DELETE /me/progress/{branch_id}",
        "GET /stories/{story_id}/branches",
        "POST /stories/{story_id}/branches",
        "GET /stories/{story_id}/branches/tree",
        "GET /stories/{story_id}/map",
        "GET /branches/{branch_id}",
        "GET /branches/{branch_id}/next-bot",
        "GET /branches/{branch_id}/full-story",
        "GET /branches/{branch_id}/export.epub",
        "GET /branches/{branch_id}/export.md",
        "POST /branches/{branch_id}/join",
        "POST /branches/{branch_id}/leave",
        "GET /branches/{branch_id}/live",
        "GET /branches/{branch_id}/segments",
        "POST /branches/{branch_id}/segments",
        "POST /votes",
        "GET /branches/{branch_id}/votes/summary",
        "GET /segments/{segment_id}/votes/summary",
        "GET /branches/{branch_id}/comments",
        "POST /branches/{branch_id}/comments",
        "DELETE /comments/{comment_id}",
        "POST /segments/{segment_id}/rewrites",
        "GET /segments/{segment_id}/rewrites",
        "POST /stories/{story_id}/pins",
        "GET /stories/{story_id}/pins",
        "PATCH /stories/{story_id}/pins/{pin_id}",
        "GET /bots/{bot_id}/reputation",
        "GET /me/bots",
        "POST /bots/{bot_id}/api-key",
        "PATCH /bots/{bot_id}",
        "POST /bots/{bot_id}/retire",
        "GET /logs",
        "GET /logs/stats",
        "GET /dashboard/stats",
        "GET /branches/{branch_id}/summary",
        "POST /branches/{branch_id}/summary",
        "PATCH /branches/{branch_id}/summary",
        "PUT /bots/{bot_id}/webhook",
        "GET /bots/{bot_id}/webhook/deliveries",
        "GET /bots/{bot_id}/webhook/status",
        ...["segments", "comments", "stories", "branches"].flatMap((t) => [`POST /admin/${t}/{id}/hide`, `POST /admin/${t}/{id}/restore`]),
        "POST /reports",
        "GET /admin/reports",
        "POST /admin/reports/{report_id}/resolve",
        "GET /admin/audit",
        "POST /follows",
        "DELETE /follows/{follow_id}",
        "GET /me/follows",
        "GET /me/inbox",
        "POST /me/inbox/read",
        "POST /me/feed-token",
        "DELETE /me/feed-token",
      ].sort(),
    );
    expect(res.body.paths["/auth/me"].get.security).toBeDefined();
    const docs = await call("/docs");
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toContain("text/html");
    expect(docs.text).toContain("/api/v1/openapi.json");
  });

  it("documents the headers middleware adds: timing, bookmarks, ETags, limits and idempotency", async () => {
    const doc = (await call("/openapi.json")).body;
    const names = (op: any) => op.parameters.map((p: any) => (p.$ref ? doc.components.parameters[p.$ref.split("/").pop()].name : p.name));
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (op.responses["101"]) {
          // The live stream is served before the API's middleware: its request id and the read limit only.
          expect(op.parameters ?? [], path).not.toEqual(expect.arrayContaining([expect.objectContaining({ $ref: "#/components/parameters/IfNoneMatch" })]));
          expect(op.responses["304"], path).toBeUndefined();
          for (const response of Object.values<any>(op.responses))
            expect(Object.keys(response.headers)).toEqual(["X-Request-Id"].concat(response === op.responses["429"] ? ["Retry-After"] : []));
          continue;
        }
        expect(names(op), `${method} ${path}`).toContain("x-d1-bookmark");
        for (const response of Object.values<any>(op.responses))
          expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(["Server-Timing", "x-d1-bookmark"]));
        if (method !== "get") continue;
        expect(names(op)).toContain("If-None-Match");
        expect(op.responses["304"].headers.ETag).toBeDefined();
        expect(op.responses["429"].headers["Retry-After"]).toBeDefined();
      }
    }
    const guarded = [
      "/stories",
      "/stories/{story_id}/branches",
      "/branches/{branch_id}/join",
      "/branches/{branch_id}/segments",
      "/votes",
      "/branches/{branch_id}/comments",
      "/segments/{segment_id}/rewrites",
      "/stories/{story_id}/pins",
      "/reports",
    ];
    for (const path of guarded) {
      const op = doc.paths[path].post;
      expect(names(op), path).toContain("idempotency-key");
      expect(op.responses["422"].description).toContain("IDEMPOTENCY_KEY_REUSED");
      expect(op.responses["429"].description).toContain("RATE_LIMIT_EXCEEDED");
      expect(op.responses["429"].headers["X-RateLimit-Remaining"]).toBeDefined();
      expect(Object.keys(op.responses).some((s) => s.startsWith("2") && op.responses[s].headers["X-RateLimit-Limit"])).toBe(true);
    }
    expect(doc.paths["/branches/{branch_id}/segments"].post.responses["429"].description).toContain("DAILY_QUOTA_EXCEEDED");
    expect(names(doc.paths["/auth/register"].post)).not.toContain("idempotency-key");
    expect(doc.paths["/branches/{branch_id}/segments"].get.responses["200"].headers.ETag.$ref).toBe("#/components/headers/ETag");
  });
});

describe("the OpenAPI document stays valid", () => {
  it("gives every operation an operationId and a security list (empty on public ones), documents 413 and the replay header", async () => {
    const doc = (await call("/openapi.json")).body;
    const ids = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z]+[A-Za-z]+$/);
        expect(ids.has(op.operationId), op.operationId).toBe(false);
        ids.add(op.operationId);
        expect(Array.isArray(op.security), `${method} ${path} security`).toBe(true);
        if (op.requestBody) expect(op.responses["413"], `${method} ${path} 413`).toBeDefined();
        if (op.parameters?.some((p: any) => p.name === "idempotency-key")) {
          const ok = Object.entries<any>(op.responses).find(([s]) => s.startsWith("2"))![1];
          expect(ok.headers["Idempotent-Replayed"], `${method} ${path}`).toBeDefined();
        }
      }
    }
    expect(doc.paths["/stories"].get.security).toEqual([]);
    expect(doc.paths["/stories"].post.security.length).toBeGreaterThan(0);
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toEqual(
      expect.arrayContaining(["VALIDATION_ERROR", "NOT_YOUR_TURN", "UPGRADE_REQUIRED"]),
    );
    for (const name of ["LiveEvent", "LiveHello", "LiveSegment", "LiveTurn", "LiveQueue", "LiveArchived"])
      expect(doc.components.schemas[name], name).toBeDefined();
  });
});
