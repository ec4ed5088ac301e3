import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "./helpers";

describe("GET /docs (the API reference, offline)", () => {
  it("answers HTML under a same-origin CSP, with nosniff, loading only same-origin scripts and the OpenAPI document", async () => {
    const res = await call("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const csp = Object.fromEntries(
      (res.headers.get("content-security-policy") ?? "")
        .split(";")
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v]),
    );
    expect(csp["default-src"]).toEqual(["'self'"]);
    expect(csp["script-src"]).toEqual(["'self'"]); // no inline script, no hash, no other host
    expect(csp["connect-src"]).toEqual(["'self'"]);
    expect(csp["object-src"]).toEqual(["'none'"]);
    expect(csp["frame-ancestors"]).toEqual(["'none'"]);
    for (const sources of Object.values(csp)) for (const s of sources) expect(s).toMatch(/^('self'|'none'|'unsafe-inline'|data:)$/);

    const scripts = [...res.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      const src = /\bsrc="([^"]+)"/.exec(attrs)?.[1];
      expect(src, "every script is a file").toBeDefined();
      expect(src).toMatch(/^\/[^/]/); // a path on this origin, not //host or https://
      expect(body.trim()).toBe("");
    }
    expect(res.text).not.toMatch(/https?:\/\//);
    expect(res.text).toContain('data-url="/api/v1/openapi.json"');
  });

  it("serves the referenced scripts from the Worker's static assets, as JavaScript with nosniff", async () => {
    const page = await call("/docs");
    const srcs = [...page.text.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs).toEqual(["/api-reference/standalone.js", "/api-reference/init.js"]);
    for (const src of srcs) {
      const res = await env.ASSETS.fetch(`https://storyloom.test${src}`);
      expect(res.status, src).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/javascript/);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      const text = await res.text();
      expect(text.length).toBeGreaterThan(src.endsWith("standalone.js") ? 1_000_000 : 100);
    }
    expect(await (await env.ASSETS.fetch("https://storyloom.test/api-reference/init.js")).text()).toContain("createApiReference");
  });

  it("keeps /api/v1 the Worker's: the API answers JSON through the same entry that serves the assets", async () => {
    const health = await SELF.fetch("https://storyloom.test/api/v1/health");
    expect(health.status).toBe(200);
    const missing = await SELF.fetch("https://storyloom.test/api/v1/api-reference/init.js");
    expect(missing.status).toBe(404);
    expect((await missing.json()) as any).toMatchObject({ status: "error", error: { code: "NOT_FOUND" } });
  });
});
