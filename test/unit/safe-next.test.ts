import { describe, expect, it } from "vitest";
import { safeNext } from "../../src/web/support/safe-next";

/** A path a browser reads as another host: `//host` or `/\host`. */
const otherHost = /^\/[/\\]/;

/** Where a browser goes with `Location: <path>` on this site, or null when it leaves the site. */
function followed(path: string): string | null {
  const here = "https://storyloom.example";
  const url = new URL(path, `${here}/login?next=x`);
  return url.origin === here ? url.pathname : null;
}

/** The `next=` of the login and register forms: a path on this site, else `/`; idempotent. */
describe("safeNext", () => {
  it.each([
    // paths on this site, as they are
    ["/", "/"],
    ["/stories/new", "/stories/new"],
    ["/branches/abc?after=3#seg-4", "/branches/abc?after=3#seg-4"],
    ["/x?a=//evil.example", "/x?a=//evil.example"],
    ["/x#//evil.example", "/x#//evil.example"],
    ["/a/b/../c", "/a/c"],
    ["/a/./b", "/a/b"],
    ["/%2fevil.example", "/%2fevil.example"],
    ["/%5cevil.example", "/%5cevil.example"],
    ["/.%2f/evil.example", "/.%2f/evil.example"],
    ["/%2e%2e/%2fevil.example", "/%2fevil.example"],
    ["/caf\u00e9", "/caf%C3%A9"],
    ["/\u2028/evil.example", "/%E2%80%A8/evil.example"],
    ["/\uff0f/evil.example", "/%EF%BC%8F/evil.example"],
    // nothing, or not a path
    [undefined, "/"],
    ["", "/"],
    ["stories", "/"],
    ["evil.example", "/"],
    ["https://evil.example/", "/"],
    ["http:evil.example", "/"],
    ["javascript:alert(1)", "/"],
    ["data:text/html,x", "/"],
    ["\\\\evil.example", "/"],
    // another host, directly
    ["//evil.example", "/"],
    ["//evil.example/x", "/"],
    ["///evil.example", "/"],
    ["////evil.example", "/"],
    ["/\\evil.example", "/"],
    ["/\\/evil.example", "/"],
    ["//[", "/"],
    ["//evil.example:99999", "/"],
    // dot segments that resolve to `//host`
    ["/.//evil.example", "/"],
    ["/..//evil.example", "/"],
    ["/a/..//evil.example", "/"],
    ["/a/b/../..//evil.example", "/"],
    ["/a/../../..//evil.example", "/"],
    ["/%2e//evil.example", "/"],
    ["/%2E//evil.example", "/"],
    ["/%2e%2e//evil.example", "/"],
    ["/.%2e//evil.example", "/"],
    ["/a/%2e%2e//evil.example", "/"],
    ["/a/%2e%2e/%2e//evil.example", "/"],
    ["/./\\evil.example", "/"],
    ["/.\\/evil.example", "/"],
    // white space and control characters, which browsers drop or refuse
    ["/\t/evil.example", "/"],
    ["/\n/evil.example", "/"],
    ["/\r\n/evil.example", "/"],
    ["/\t\\evil.example", "/"],
    ["/ /evil.example", "/"],
    ["/\u0000/evil.example", "/"],
    ["/\u001b[2J", "/"],
    ["/\u007f/evil.example", "/"],
    [" /stories", "/"],
    ["/stories ", "/"],
  ])("%j → %j", (next, expected) => {
    expect(safeNext(next)).toBe(expected);
  });

  const tricky = [
    "/.//evil.example",
    "/%2e//evil.example",
    "/a/..//evil.example",
    "/%2e%2e/%2fevil.example",
    "/%252e//evil.example",
    "/%5c%5cevil.example",
    "/x/%2e%2e/%2e%2e/%2e%2e//evil.example?q=1#f",
    "/a/b/c",
    "/a%2f..%2f..//evil.example",
  ];

  it.each(tricky)("%j: never a path to another host, and idempotent", (next) => {
    const once = safeNext(next);
    expect(once).not.toMatch(otherHost);
    expect(followed(once)).not.toBeNull();
    expect(safeNext(once)).toBe(once);
  });
});
