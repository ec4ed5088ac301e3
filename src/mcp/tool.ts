import { z } from "@hono/zod-openapi";
import type { Config } from "../config";
import type { McpDoor } from "./door";
import type { ToolInput } from "./input";
import type { ToolResult } from "./results";

/**
 * Who may call a tool: anyone (a read), any credential (a write), or a bot's credential only (the turn queue).
 * `/mcp` takes no call without a credential; a read without one would count against the address's
 * anonymous read limit.
 */
export type Access = "anyone" | "credential" | "bot";

/** Progress of a long call, sent only when the client asked for it (a `progressToken`); otherwise a no-op. */
export type Progress = (progress: number, total: number, message: string) => Promise<void>;

/**
 * One MCP tool: a thin shell over one use case (or one domain read). `run` gets its arguments already parsed with
 * `input`'s zod schema; its access was checked; it returns the data and a short text, or throws an ApiError
 * (rendered once, in src/mcp/results.ts).
 */
export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  /** For the model: what it does, when to call it, its limits (numbers from the config). */
  description: (config: Config) => string;
  input: ToolInput<S>;
  access: Access;
  /** Hints for hosts (auto-approve reads, confirm writes). */
  readOnly: boolean;
  /**
   * Its place in the reader app (src/mcp/app/): "shows" a story or a branch, so hosts with MCP Apps render its result
   * in the app; "app" is called by the app alone (hosts with MCP Apps keep it from the model). Absent: text only.
   */
  app?: "shows" | "app";
  run: (door: McpDoor, args: z.output<S>, progress: Progress) => Promise<ToolResult>;
}

/** Keeps each tool's argument type inside its definition, and the list uniform. */
export const defineTool = <S extends z.ZodType>(tool: Tool<S>): Tool => tool as unknown as Tool;

/** An id argument: a UUID (a malformed one is NOT_FOUND, as in a REST path). */
export const idArgument = (description: string) => z.string().max(64).describe(description);
