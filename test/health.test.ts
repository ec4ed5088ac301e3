import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
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
    const res = await call(`/stories/${story.id}`);
    const err = expectError(res, 500, "INTERNAL_ERROR");
    expect(err.message).toBe("Internal server error");
    expect(res.text).not.toMatch(/pins|sqlite|D1_ERROR/i);
  });
});
