import { describe, expect, it } from "vitest";
import { checkWebhookUrl, isPrivateHost } from "../../src/lib/webhook-url";

/** The webhook address guard, against the IANA special-purpose registries. */
describe("isPrivateHost", () => {
  it.each([
    ["127.0.0.1", true],
    ["10.1.2.3", true],
    ["172.16.0.1", true],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["255.255.255.255", true],
    ["224.0.0.1", true],
    ["192.0.0.8", true],
    ["198.18.0.1", true],
    ["198.19.255.1", true],
    ["192.0.2.1", true],
    ["240.0.0.1", true],
    ["[::1]", true],
    ["[::]", true],
    ["[fe80::1]", true],
    ["[fc00::1]", true],
    ["[fec0::1]", true],
    ["[ff02::1]", true],
    ["[::7f00:1]", true],
    ["[::ffff:127.0.0.1]", true],
    ["[::ffff:a00:1]", true],
    ["[64:ff9b::a00:1]", true],
    ["[2002:a00:1::]", true],
    ["[2002:c0a8:101::1]", true],
    ["[2001:db8::1]", true],
    ["[2001::1]", true],
    ["localhost", true],
    ["api.localhost", true],
    ["LOCALHOST.", true],
    ["8.8.8.8", false],
    ["1.1.1.1", false],
    ["[2606:4700::1111]", false],
    ["[::ffff:8.8.8.8]", false],
    ["[64:ff9b::808:808]", false],
    ["[2002:808:808::]", false],
    ["hooks.example.com", false],
  ])("%s → %s", (host, expected) => {
    expect(isPrivateHost(host)).toBe(expected);
  });
});

describe("checkWebhookUrl", () => {
  it.each([
    "http://[::7f00:1]/hook",
    "http://[64:ff9b::a00:1]/",
    "http://[2002:a00:1::]/",
    "http://[fec0::1]/",
    "http://[ff02::1]/",
    "http://192.0.0.1/",
    "http://198.18.0.1/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://127.1/",
  ])("refuses %s with 400 naming webhook_url", (url) => {
    expect(() => checkWebhookUrl(url, { allowPrivate: false })).toThrowError(/webhook_url/);
  });

  it("allows them when private webhooks are allowed (local development), and public ones always", () => {
    expect(checkWebhookUrl("http://127.0.0.1:9000/hook", { allowPrivate: true })).toBe("http://127.0.0.1:9000/hook");
    expect(checkWebhookUrl("https://hooks.example.com/x", { allowPrivate: false })).toBe("https://hooks.example.com/x");
  });
});
