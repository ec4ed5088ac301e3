/**
 * The reference bot's loop done with MCP tool calls only: `npm run bot:mcp -- --url http://127.0.0.1:8787/mcp
 * --branch <id> [--key slk_…] [--name <bot name>] [--turns 10] [--minutes 10]`.
 *
 * Without --key it registers a bot once over REST (registration is not a tool: it happens before an agent has a
 * credential) and prints the key. Then it connects to the MCP server with `Authorization: Bearer <key>` and loops
 * on `join_branch`, `wait_for_turn` (woken by the branch's room when its turn begins) and `write_segment`, with the
 * offline writer or the configured LLM provider (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL), until --turns segments are
 * written or --minutes have passed, then `leave_branch`. One line per event on stdout, as `npm run bot` prints:
 *   <ISO time> <bot name> <event> key=value …
 */
import { parseArgs } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { printable } from "./printable";
import { type WriteContext, fitLength, llmSettings, llmWrite, offlineWrite } from "./writer";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    branch: { type: "string" },
    key: { type: "string" },
    name: { type: "string" },
    turns: { type: "string", default: "10" },
    minutes: { type: "string", default: "10" },
    era: { type: "string", default: "auto" },
  },
});
if (!args.url || !args.branch) {
  console.error(
    "usage: npm run bot:mcp -- --url <origin>/mcp --branch <branch id> [--key slk_…] [--name <bot name>] [--turns 10] [--minutes 10] [--era auto|legacy|modern]",
  );
  process.exit(2);
}
const MCP_URL = new URL(args.url);
const BRANCH = args.branch;
const NAME = args.name ?? `mcp-${crypto.randomUUID().slice(0, 6)}`;
const MAX_TURNS = Number(args.turns);
const DEADLINE = Date.now() + Number(args.minutes) * 60_000;
const LLM = llmSettings(process.env);

function log(event: string, fields: Record<string, unknown> = {}) {
  const kv = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" && /\s/.test(v) ? JSON.stringify(v) : v}`);
  console.log(printable([new Date().toISOString(), NAME, event, ...kv].join(" ")));
}

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    log("stopping", { signal });
    stopping = true;
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A bot's API key: given, or registered once over REST (the service's one step before any credential exists). */
async function apiKey(): Promise<string> {
  if (args.key) return args.key;
  const res = await fetch(new URL("/api/v1/auth/bot/register", MCP_URL), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: NAME, model: LLM?.model ?? "storyloom-offline-writer" }),
  });
  const body = (await res.json()) as { data?: { api_key: string; bot_id: string }; error?: { code: string; message: string } };
  if (!body.data) throw new Error(`registration failed: ${body.error?.code} ${body.error?.message}`);
  log("registered", { bot_id: body.data.bot_id, api_key: body.data.api_key });
  return body.data.api_key;
}

interface ToolAnswer {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: { type: string; text?: string }[];
}

type Turn = {
  your_turn: boolean;
  queued: boolean;
  context: {
    branch_title: string;
    story_background: string;
    style_rules: string | null;
    language: string;
    min_length: number;
    max_length: number;
    previous_segments: { content: string }[];
  } | null;
};

async function main() {
  const key = await apiKey();
  const era =
    args.era === "modern" ? { mode: { pin: "2026-07-28" as const } } : args.era === "legacy" ? { mode: "legacy" as const } : { mode: "auto" as const };
  const client = new Client({ name: "storyloom-mcp-bot", version: "1.0.0" }, { versionNegotiation: era });
  await client.connect(new StreamableHTTPClientTransport(MCP_URL, { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  log("connected", { era: client.getProtocolEra() });

  /** One tool call: the structured answer, or the error (code, details) the server answered with. */
  const call = async (name: string, toolArgs: Record<string, unknown>) => {
    const answer = (await client.callTool({ name, arguments: toolArgs }, { timeout: 70_000, resetTimeoutOnProgress: true })) as ToolAnswer;
    if (answer.isError) return { error: answer.structuredContent?.error as { code: string; message: string; details?: Record<string, unknown> } };
    return { data: answer.structuredContent as Record<string, unknown> };
  };

  const joined = await call("join_branch", { branch_id: BRANCH });
  if (joined.error) throw new Error(`join_branch: ${joined.error.code} ${joined.error.message}`);
  log(joined.data!.already_queued ? "already-queued" : "joined", { order: joined.data!.your_turn_order, bot_id: joined.data!.bot_id });

  let written = 0;
  while (written < MAX_TURNS && Date.now() < DEADLINE && !stopping) {
    const waited = await call("wait_for_turn", { branch_id: BRANCH, timeout_seconds: 50 });
    if (waited.error) {
      log("wait-refused", { code: waited.error.code });
      if (waited.error.code === "NOT_FOUND") break;
      await sleep(2000);
      continue;
    }
    const turn = waited.data as unknown as Turn;
    if (!turn.queued) {
      log("not-queued");
      break;
    }
    if (!turn.your_turn || !turn.context) continue;
    log("turn", { mine: true });
    const c = turn.context;
    const ctx: WriteContext = {
      botName: NAME,
      title: c.branch_title,
      background: c.story_background,
      styleRules: c.style_rules,
      language: c.language,
      minLength: c.min_length,
      maxLength: c.max_length,
      recent: c.previous_segments.map((s) => s.content),
    };
    let text = LLM ? await llmWrite(ctx, LLM).catch(() => offlineWrite(ctx)) : offlineWrite(ctx);
    text = fitLength(text, ctx);
    const wrote = await call("write_segment", { branch_id: BRANCH, content: text });
    if (wrote.error) {
      log("write-refused", { code: wrote.error.code, retry_after: wrote.error.details?.retry_after });
      if (wrote.error.code === "RATE_LIMIT_EXCEEDED" || wrote.error.code === "DAILY_QUOTA_EXCEEDED") {
        await sleep(Math.min(60, Number(wrote.error.details?.retry_after ?? 10)) * 1000);
      }
      continue;
    }
    written++;
    const segment = wrote.data as { sequence_order: number; id: string; next_bot: { name: string } | null };
    log("wrote", { sequence: segment.sequence_order, segment_id: segment.id, next: segment.next_bot?.name });
  }
  const left = await call("leave_branch", { branch_id: BRANCH });
  log(left.error ? "leave-refused" : "left", { code: left.error?.code, written });
  await client.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    log("failed", { error: String(err instanceof Error ? err.message : err) });
    process.exit(1);
  },
);
