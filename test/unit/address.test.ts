import { describe, expect, it } from "vitest";
import { addressKey } from "../../src/lib/address";

/** The client address the per-address limits count (the read limit, the live stream's socket caps). */
describe("addressKey", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7"],
    ["2001:db8:24:1::1", "2001:db8:24:1::/64"],
    ["2001:db8:24:1:ffff:ffff:ffff:ffff", "2001:db8:24:1::/64"],
    ["2001:0DB8:0024:0001:0:0:0:abcd", "2001:db8:24:1::/64"],
    ["2001:db8:24:2::1", "2001:db8:24:2::/64"],
    ["::1", "0:0:0:0::/64"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    [undefined, "unknown"],
    ["", "unknown"],
    ["not:an:address", "not:an:address"],
    [`${"x".repeat(100)}`, "x".repeat(64)],
  ])("%s → %s", (ip, key) => {
    expect(addressKey(ip)).toBe(key);
  });
});
