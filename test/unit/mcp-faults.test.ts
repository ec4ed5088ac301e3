import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, UnsupportedProtocolVersionError } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { clientsFault } from "../../src/mcp/faults";

describe("clientsFault: what the SDK's handler reports, the client's error or ours", () => {
  const table: [string, Error, boolean][] = [
    ["the ladder's refusal", new Error("Rejected inbound request (envelope-invalid): Invalid _meta envelope"), true],
    ["headers that disagree", new Error("Rejected inbound request (header-body-version-mismatch): Bad Request: …"), true],
    ["a media type not JSON", new Error("Unsupported Media Type: Content-Type must be application/json"), true],
    ["a revision not served", new UnsupportedProtocolVersionError({ supported: ["2026-07-28"], requested: "2099-01-01" }), true],
    ["a missing client capability", new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } }), true],
    ["an invalid-params answer", new ProtocolError(ProtocolErrorCode.InvalidParams, "bad"), true],
    ["an internal error", new ProtocolError(ProtocolErrorCode.InternalError, "boom"), false],
    ["a thrown error", new TypeError("Cannot read properties of undefined"), false],
    ["the subscription limit", new Error("subscriptions/listen refused: subscription limit reached (1024)"), false],
    ["a message that merely mentions a rejection", new Error("the store Rejected inbound request"), false],
  ];
  for (const [name, error, expected] of table) {
    it(`${name}: ${expected ? "the client's" : "ours"}`, () => expect(clientsFault(error)).toBe(expected));
  }
});
