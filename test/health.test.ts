// Runs alone (vitest.config.ts): drops a table (pins) to see a database failure answered as a 500.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { call, createStory, expectError, registerHuman } from "./helpers";

describe("GET /health and what every route shares", () => {
  it("GET /health answers 200 with status healthy and a message, exactly as the spec shows", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "healthy", message: expect.any(String) });
  });

  it("an unknown path or method gets 404 NOT_FOUND in the JSON envelope", async () => {
    expectError(await call("/nope"), 404, "NOT_FOUND");
    expectError(await call("/health", { method: "DELETE" }), 404, "NOT_FOUND");
  });

  it("refuses bodies over 1 MiB with 413 PAYLOAD_TOO_LARGE", async () => {
    const big = JSON.stringify({ username: "x".repeat(1024 * 1024 + 10) });
    const res = await call("/auth/register", { rawBody: big, headers: { "Content-Type": "application/json" } });
    expectError(res, 413, "PAYLOAD_TOO_LARGE");
  });

  it("answers CORS preflights from any origin, allowing Authorization and X-API-Key", async () => {
    const res = await call("/auth/me", {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization,x-api-key" },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = res.headers.get("access-control-allow-headers")!.toLowerCase();
    expect(allowed).toContain("authorization");
    expect(allowed).toContain("x-api-key");
    const get = await call("/health", { headers: { Origin: "https://app.example" } });
    expect(get.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("a server fault", () => {
  it("answers 500 INTERNAL_ERROR in the envelope without leaking internals", async () => {
    const story = await createStory((await registerHuman()).token);
    // A real fault, not a mock: the table the story page reads its pins from disappears.
    await env.DB.exec("DROP TABLE pins");
    const logged: unknown[][] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args));
    const res = await call(`/stories/${story.id}`);
    spy.mockRestore();
    const err = expectError(res, 500, "INTERNAL_ERROR");
    expect(err.message).toBe("Internal server error");
    expect(res.text).not.toMatch(/pins|sqlite|D1_ERROR/i);
    // The fault is logged with the request id the client was given.
    expect(JSON.parse(String(logged[0][0]))).toMatchObject({ event: "unhandled error", request_id: res.headers.get("x-request-id") });
  });
});

describe("request ids and logs", () => {
  it("every response carries X-Request-Id: ours, or the caller's own well-formed X-Request-Id (Hono's rule), never the cf-ray; error envelopes repeat it", async () => {
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const ok = await call("/health");
    expect(ok.headers.get("x-request-id")).toMatch(UUID);
    for (const ray of ["8d3a1f2b3c4d5e6f-AMS", `"quoted" ${"x".repeat(6000)}`]) {
      const res = await call("/health", { headers: { "cf-ray": ray } });
      expect(res.headers.get("x-request-id")).toMatch(UUID);
    }
    const own = await call("/health", { headers: { "X-Request-Id": "client-trace_42=" } });
    expect(own.headers.get("x-request-id")).toBe("client-trace_42=");
    for (const bad of ["has space", '"quoted"', "semi;colon", "x".repeat(256)]) {
      const res = await call("/health", { headers: { "X-Request-Id": bad } });
      expect(res.headers.get("x-request-id"), bad).toMatch(UUID);
    }
    const missing = await call("/nope");
    expect(missing.body.error.request_id).toBe(missing.headers.get("x-request-id"));
    const refused = await call("/auth/me", { headers: { "cf-ray": "8d3a1f2b3c4d5e6f-AMS" } });
    expect(refused.body.error.request_id).toBe(refused.headers.get("x-request-id"));
    expect(refused.body.error.request_id).toMatch(UUID);
  });

  it("logs a well-formed cf-ray as its own field, cf_ray, and leaves any other out", async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, "info").mockImplementation((line: unknown) => void lines.push(String(line)));
    const rays = [
      "8d3a1f2b3c4d5e6f-AMS",
      '8d3a1f2b3c4d5e6f-AMS"',
      "8D3A1F2B3C4D5E6F-AMS",
      "8d3a1f2b3c4d5e6-AMS",
      "8d3a1f2b3c4d5e6f-AMSX",
      "8d3a1f2b3c4d5e6f-ams",
      "8d3a1f2b3c4d5e6f-AMS,8d3a1f2b3c4d5e6f-AMS",
      `8d3a1f2b3c4d5e6f-AMS${"x".repeat(6000)}`,
    ];
    try {
      for (const ray of rays) await call("/health", { headers: { "cf-ray": ray }, env: { LOG_REQUESTS: "true" } });
      await call("/health", { env: { LOG_REQUESTS: "true" } });
      await vi.waitFor(() => expect(lines).toHaveLength(rays.length + 1)); // written once the response is out
    } finally {
      spy.mockRestore();
    }
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged).toHaveLength(rays.length + 1);
    expect(logged[0].cf_ray).toBe("8d3a1f2b3c4d5e6f-AMS");
    for (const line of logged.slice(1)) expect(line).not.toHaveProperty("cf_ray");
    expect(lines.join("\n")).not.toContain("xxxxxxxx");
  });

  it("writes one JSON line per request with what the platform's record lacks: route, D1 round trips, objects reached, caller, request id, error code", async () => {
    const human = await registerHuman();
    const lines: string[] = [];
    const spy = vi.spyOn(console, "info").mockImplementation((line: unknown) => void lines.push(String(line)));
    const res = await call("/auth/me", { token: human.token, env: { LOG_REQUESTS: "true" } });
    const bad = await call("/stories/not-a-story", { env: { LOG_REQUESTS: "true" } });
    await createStory(human.token); // a story, so a shard holds one
    const searched = await call("/search?q=anything", { env: { LOG_REQUESTS: "true" } });
    await vi.waitFor(() => expect(lines).toHaveLength(3)); // written once the response is out
    spy.mockRestore();
    const [me, missing, search] = lines.map((l) => JSON.parse(l));
    // A read that left D1 says where it went: the search shards.
    expect(search).toMatchObject({ route: "/api/v1/search", d1_round_trips: 1, objects: ["SearchShard"], request_id: searched.headers.get("x-request-id") });
    expect(me).toEqual({
      request_id: res.headers.get("x-request-id"),
      route: "/api/v1/auth/me",
      d1_round_trips: 1,
      actor: "human",
      error: null,
    });
    expect(missing).toMatchObject({
      route: "/api/v1/stories/:story_id",
      actor: "anonymous",
      error: "NOT_FOUND",
      request_id: bad.headers.get("x-request-id"),
    });
    expect(lines.join("\n")).not.toContain(human.token);
  });
});

describe("GET /health?deep=1", () => {
  it("also checks D1 and reports the package version and the migration level", async () => {
    const res = await call("/health?deep=1");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "healthy",
      message: expect.any(String),
      version: { package: expect.stringMatching(/^\d+\.\d+\.\d+/), migration: expect.stringMatching(/^0\d{3}_/) },
      d1: { ok: true, ms: expect.any(Number) },
    });
    expect(res.headers.get("server-timing")).toMatch(/^d1;desc="1 round trip"/);
  });

  it("is 503 SERVICE_UNAVAILABLE in the envelope when D1 is unreachable", async () => {
    // The platform's outage, simulated: a D1 binding whose every call fails as an unreachable database would.
    const down = {
      prepare: () => {
        throw new Error("D1_ERROR: Network connection lost.");
      },
      batch: async () => {
        throw new Error("D1_ERROR: Network connection lost.");
      },
      withSession: () => down,
      getBookmark: () => null,
    } as unknown as D1Database;
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await call("/health?deep=1", { env: { DB: down } });
    expectError(res, 503, "SERVICE_UNAVAILABLE");
    vi.restoreAllMocks();
  });
});
