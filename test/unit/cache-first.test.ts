import { describe, expect, it } from "vitest";
import { type Door, plainAnonymousGet } from "../../src/middleware/cache-first";

/** Which requests the cache-first path may answer from an anonymous micro-cache entry (src/middleware/cache-first.ts). */
describe("plainAnonymousGet", () => {
  it.each<[string, string, Record<string, string>, Door, boolean]>([
    ["a plain GET of the API", "GET", {}, "api", true],
    ["a plain GET of a page", "GET", {}, "web", true],
    ["a HEAD", "HEAD", {}, "api", false],
    ["a bearer credential", "GET", { authorization: "Bearer x" }, "api", false],
    ["an API key", "GET", { "x-api-key": "slk_x" }, "web", false],
    ["a D1 bookmark", "GET", { "x-d1-bookmark": "b" }, "api", false],
    ["the caller's own request id", "GET", { "x-request-id": "trace-1" }, "web", false],
    ["a cookie on a page (a session, a reader's preferences)", "GET", { cookie: "a=b" }, "web", false],
    ["a cookie on the API (which reads none)", "GET", { cookie: "a=b" }, "api", true],
  ])("%s", (_, method, headers, door, answer) => {
    expect(plainAnonymousGet(new Request("https://storyloom.test/x", { method, headers }), door)).toBe(answer);
  });
});
