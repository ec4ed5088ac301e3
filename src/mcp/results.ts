import { ERROR_ADVICE } from "../lib/error-advice";
import type { ErrorCode } from "../lib/errors";
import { toApiError } from "../middleware/render-error";

/** A tool's answer as MCP carries it: the data as structured content, and a short text for the model. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

export const toolResult = (data: object, text: string): ToolResult => ({
  content: [{ type: "text", text }],
  structuredContent: data as Record<string, unknown>,
});

/**
 * Every failure of a tool, as a result the model reads (never a protocol error): `isError: true`, the REST error
 * `{code, message, details?}` as structured content, and a text with what to do next (src/lib/error-advice.ts).
 * Anything that is not an ApiError is logged and answered as INTERNAL_ERROR, as `renderError` does over REST.
 */
export function errorResult(err: unknown, requestId: string): { result: ToolResult; code: ErrorCode } {
  const e = toApiError(err, requestId);
  const error: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.details) error.details = e.details;
  error.request_id = requestId;
  const details = e.details ? ` Details: ${JSON.stringify(e.details).slice(0, 600)}.` : "";
  const text = `${e.code}: ${e.message}.${details} What to do: ${ERROR_ADVICE[e.code]}`;
  return { result: { content: [{ type: "text", text }], structuredContent: { error }, isError: true }, code: e.code };
}

/**
 * Every tool's `outputSchema`: hosts validate a result's structured content against it, an error's as well as a
 * success's, so one schema takes both: the data as the REST API answers it (docs/api.md), or `{error}` as above.
 * Advertised only: the SDK is given a Standard Schema whose `validate` lets every value through (as the arguments'
 * is, src/mcp/input.ts), since checking our own answers again on every call would cost CPU and change nothing.
 */
const OUTPUT_JSON_SCHEMA = {
  type: "object",
  description: "On success the data, as the REST API answers it; when isError is true, {error: {code, message, details?, request_id}}.",
  properties: {
    error: {
      type: "object",
      properties: {
        // The codes are the REST API's (docs/api.md); listed here they would add most of a kilobyte to every tool.
        code: { type: "string" },
        message: { type: "string" },
        details: { type: "object" },
        request_id: { type: "string" },
      },
      required: ["code", "message"],
    },
  },
} as const;

export const toolOutput = {
  "~standard": {
    version: 1,
    vendor: "storyloom",
    validate: (value: unknown) => ({ value }),
    jsonSchema: { input: () => OUTPUT_JSON_SCHEMA, output: () => OUTPUT_JSON_SCHEMA },
  },
} as const;
