import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { nowIso } from "../db/client";

/**
 * Whether an error the SDK's handler reports is the client's: its validation ladder's refusals ("Rejected inbound
 * request (…)": a malformed body or `_meta` envelope, headers that disagree with the body), a body not sent as JSON,
 * and the protocol errors it answers a request with (a revision we do not serve, a missing client capability).
 * Anything else (an internal error, a failure outside any request) is ours.
 */
export function clientsFault(error: Error): boolean {
  if (error instanceof ProtocolError) return error.code !== ProtocolErrorCode.InternalError;
  return /^(Rejected |Unsupported Media Type)/.test(error.message);
}

/**
 * The handler's `onerror`: one JSON line, a warning for a client's error (anyone can send those, so they must not
 * flood the error log) and an error for ours.
 */
export function logMcpFault(error: Error) {
  if (clientsFault(error)) console.warn(JSON.stringify({ at: nowIso(), event: "mcp request refused", message: error.message }));
  else console.error(JSON.stringify({ at: nowIso(), event: "mcp error", message: error.message }));
}
