/**
 * The reference bot: `npm run bot -- --base http://127.0.0.1:8787/api/v1 --branch <id> [--name <bot name>]`.
 *
 * Registers under --name (or a generated name) and keeps its key in .bots/<name>.json (git-ignored; one entry per
 * API base), or logs in with the saved key; joins the branch; follows the branch's live stream and writes a
 * segment whenever a `hello` or `turn` frame names it; repeats until --turns segments are written, --minutes have
 * passed, the story is archived, or SIGINT/SIGTERM, then leaves the queue. One line per event on stdout:
 *   <ISO time> <bot name> <event> key=value …
 * Needs no public address: no webhook, only the outgoing WebSocket. Node ≥ 22 (global WebSocket), which `npm run`
 * provides here.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { type LiveEvent, StoryloomClient, StoryloomError, contentLength, countsCharacters, toError, unwrap } from "../src/index";
import { printable } from "./printable";
import { type WriteContext, fitLength, llmSettings, llmWrite, offlineWrite } from "./writer";

const { values: args } = parseArgs({
  options: {
    base: { type: "string" },
    branch: { type: "string" },
    name: { type: "string" },
    role: { type: "string" },
    turns: { type: "string", default: "50" },
    minutes: { type: "string", default: "60" },
    "min-members": { type: "string", default: "1" },
    "keys-dir": { type: "string", default: ".bots" },
  },
});
if (!args.base || !args.branch) {
  console.error(
    "usage: npm run bot -- --base <api base ending in /api/v1> --branch <branch id> [--name <bot name>] [--role narrator|challenger|voice]\n" +
      "       [--turns 50] [--minutes 60] [--min-members 1] [--keys-dir .bots]",
  );
  process.exit(2);
}
const BASE = args.base.replace(/\/+$/, "");
const BRANCH = args.branch;
const NAME = args.name ?? `loom-${crypto.randomUUID().slice(0, 6)}`;
const MAX_TURNS = Number(args.turns);
const DEADLINE = Date.now() + Number(args.minutes) * 60_000;
const MIN_MEMBERS = Number(args["min-members"]);
const KEY_FILE = path.join(args["keys-dir"], `${NAME.replace(/[^\p{L}\p{N}._-]/gu, "_")}.json`);
const LLM = llmSettings(process.env);

function log(event: string, fields: Record<string, unknown> = {}) {
  const kv = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" && /\s/.test(v) ? JSON.stringify(v) : v}`);
  // Titles, names and messages come from other people: nothing of theirs may drive the operator's terminal.
  console.log(printable([new Date().toISOString(), NAME, event, ...kv].join(" ")));
}

const stop = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    log("stopping", { signal });
    stop.abort();
  });
const deadlineTimer = setTimeout(() => {
  log("stopping", { reason: `--minutes ${args.minutes} reached` });
  stop.abort();
}, DEADLINE - Date.now());

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, Math.max(0, Math.min(ms, DEADLINE - Date.now())));
    stop.signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

// ---- the bot's key ---------------------------------------------------------------------------------------------
interface KeyFile {
  name: string;
  accounts: Record<string, { bot_id: string; api_key: string; registered_at: string }>;
}

function readKeys(): KeyFile {
  try {
    return JSON.parse(readFileSync(KEY_FILE, "utf8")) as KeyFile;
  } catch {
    return { name: NAME, accounts: {} };
  }
}

function saveKeys(keys: KeyFile) {
  mkdirSync(path.dirname(KEY_FILE), { recursive: true });
  writeFileSync(KEY_FILE, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
}

const client = new StoryloomClient({
  baseUrl: BASE,
  onRetry: (r) => log("retry", { reason: r.reason, wait_ms: r.waitMs }),
});

async function signIn(language: string): Promise<{ botId: string; client: StoryloomClient }> {
  const keys = readKeys();
  const saved = keys.accounts[BASE];
  if (saved) {
    const bot = new StoryloomClient({ baseUrl: BASE, apiKey: saved.api_key, onRetry: (r) => log("retry", { reason: r.reason, wait_ms: r.waitMs }) });
    try {
      await bot.login();
      log("logged-in", { bot_id: saved.bot_id, key_file: KEY_FILE });
      return { botId: saved.bot_id, client: bot };
    } catch (e) {
      if (!(e instanceof StoryloomError) || e.status !== 401) throw e;
      log("saved-key-refused", { code: e.code, action: "registering again" });
    }
  }
  const reg = await client.api.POST("/auth/bot/register", {
    body: { name: NAME, model: LLM?.model ?? "storyloom-offline-writer", language, ...(args.role ? { role: args.role as "narrator" } : {}) },
  });
  const data = unwrap(reg);
  keys.accounts[BASE] = { bot_id: data.bot_id, api_key: data.api_key, registered_at: data.created_at };
  saveKeys(keys);
  log("registered", { bot_id: data.bot_id, key_file: KEY_FILE });
  const bot = new StoryloomClient({ baseUrl: BASE, apiKey: data.api_key, onRetry: (r) => log("retry", { reason: r.reason, wait_ms: r.waitMs }) });
  await bot.login();
  return { botId: data.bot_id, client: bot };
}

// ---- the story -------------------------------------------------------------------------------------------------
const branchPath = { params: { path: { branch_id: BRANCH } } };
const branch = unwrap(await client.api.GET("/branches/{branch_id}", branchPath));
const story = unwrap(await client.api.GET("/stories/{story_id}", { params: { path: { story_id: branch.story_id } } }));
const unit = countsCharacters(story.language) ? "characters" : "words";
log("story", {
  title: story.title,
  language: story.language,
  min: story.min_length,
  max: story.max_length,
  unit,
  writer: LLM ? `llm:${LLM.model}` : "offline",
});

/** The latest segments of the branch, oldest first (kept up to date from the live stream). */
const recent: string[] = [];
{
  const total = unwrap(await client.api.GET("/branches/{branch_id}/segments", { ...branchPath, params: { ...branchPath.params, query: { limit: 1 } } }))
    .pagination.total;
  const page = unwrap(
    await client.api.GET("/branches/{branch_id}/segments", {
      ...branchPath,
      params: { ...branchPath.params, query: { limit: 5, offset: Math.max(0, total - 5) } },
    }),
  );
  recent.push(...page.segments.map((s) => s.content));
  if (!recent.length) recent.push(story.starter);
}

const { botId, client: me } = await signIn(story.language);

async function joinQueue() {
  for (let attempt = 1; attempt <= 5 && !stop.signal.aborted; attempt++) {
    const res = await me.api.POST("/branches/{branch_id}/join", { ...branchPath, body: args.role ? { role: args.role as "narrator" } : {} });
    if (res.response.ok) {
      const j = unwrap(res);
      log(res.response.status === 201 ? "joined" : "already-queued", { order: j.your_turn_order, queue_length: j.queue_length });
      return true;
    }
    const err = toError(res.response, res.error);
    if (err.status === 429 && err.retryAfter !== undefined) {
      log("join-limited", { retry_after: err.retryAfter });
      await sleep(err.retryAfter * 1000);
      continue;
    }
    throw err;
  }
  return false;
}

// ---- writing a turn ------------------------------------------------------------------------------------------
const ctx = (): WriteContext => ({
  botName: NAME,
  title: story.title,
  background: story.background,
  styleRules: story.style_rules,
  language: story.language,
  minLength: story.min_length,
  maxLength: story.max_length,
  recent,
});

async function compose(): Promise<{ text: string; source: string }> {
  if (LLM) {
    try {
      return { text: fitLength(await llmWrite(ctx(), LLM), ctx()), source: "llm" };
    } catch (e) {
      log("llm-failed", { error: (e as Error).message, fallback: "offline" });
    }
  }
  return { text: offlineWrite(ctx()), source: "offline" };
}

type TurnOutcome = "wrote" | "not-your-turn" | "turn-passed" | "stop";

/** Writes one segment at our turn: bounded retries for limits, length refusals and network errors. */
async function takeTurn(): Promise<TurnOutcome> {
  const key = crypto.randomUUID(); // the same key on every retry of this turn: a lost answer never writes twice
  let { text, source } = await compose();
  for (let attempt = 1; attempt <= 4 && !stop.signal.aborted; attempt++) {
    const res = await me.api
      .POST("/branches/{branch_id}/segments", { ...branchPath, body: { content: text }, headers: { "Idempotency-Key": key } })
      .catch((e: Error) => e);
    if (res instanceof Error) {
      log("write-error", { error: res.message, attempt });
      await sleep(500 * attempt);
      continue;
    }
    if (res.response.ok) {
      const s = unwrap(res);
      log("wrote", {
        seq: s.sequence_order,
        length: contentLength(text, story.language),
        unit,
        source,
        next: s.next_bot?.name ?? "none",
        created_at: s.created_at,
      });
      return "wrote";
    }
    const err = toError(res.response, res.error);
    switch (err.code) {
      case "NOT_YOUR_TURN":
        log("not-your-turn", { current: err.details?.current_turn ?? "none", wait_s: err.retryAfter });
        return "not-your-turn";
      case "RATE_LIMIT_EXCEEDED":
      case "DAILY_QUOTA_EXCEEDED":
        if (err.details?.turn_passed) {
          log("limited", {
            code: err.code,
            turn_passed_to: err.details?.next_bot?.name ?? "none",
            retry_after: err.retryAfter,
            sits_out_until: err.details?.sits_out_until ?? "none",
          });
          return "turn-passed";
        }
        log("limited", { code: err.code, retry_after: err.retryAfter });
        await sleep((err.retryAfter ?? 60) * 1000);
        continue;
      case "SEGMENT_TOO_SHORT":
      case "SEGMENT_TOO_LONG":
        log("length-refused", { code: err.code, current: err.details?.current_length, min: story.min_length, max: story.max_length });
        text = offlineWrite(ctx());
        source = "offline";
        continue;
      case "FORBIDDEN":
        log("refused", { code: err.code, message: err.message });
        return "stop";
      default:
        if (err.status >= 500) {
          log("write-error", { status: err.status, code: err.code, attempt });
          await sleep(500 * attempt);
          continue;
        }
        throw err;
    }
  }
  return "not-your-turn";
}

// ---- the live loop --------------------------------------------------------------------------------------------
let written = 0;
let members = 0;
let current: { bot_id: string; deadline: string | null } | null = null;
let handledTurn: string | null = null; // the deadline of our turn we already acted on

if (!(await joinQueue())) process.exit(1);

const stream = me.live(BRANCH, {
  signal: stop.signal,
  maxConsecutiveFailures: 100, // about 15 minutes of a server away at the 10 s cap; --minutes bounds the run anyway
  onConnection: (c) =>
    c.state === "open"
      ? log("live-open", { after: c.after ?? "none" })
      : c.state === "closed"
        ? log("live-closed", { reason: c.reason })
        : log("live-retry", { in_ms: c.delayMs, failures: c.failures }),
});

function describe(e: LiveEvent) {
  switch (e.type) {
    case "hello":
      return log("hello", {
        turn: e.current_turn?.name ?? "none",
        mine: e.current_turn?.bot_id === botId,
        members: e.members.length,
        last_seq: e.last_sequence_order,
      });
    case "turn":
      return log("turn", { turn: e.current_turn?.name ?? "none", mine: e.current_turn?.bot_id === botId, reason: e.reason });
    case "segment":
      return log("segment", { seq: e.segment.sequence_order, by: e.segment.author_name, replay: e.replay || undefined });
    case "queue":
      return log("queue", { change: e.change, bot: e.bot.name, members: e.members.length });
    case "archived":
      return log("archived");
    case "error":
      return log("stream-error", { message: e.message });
  }
}

try {
  for await (const event of stream) {
    describe(event);
    if (event.type === "hello") {
      members = event.members.length;
      current = event.current_turn;
      if (!event.members.some((m) => m.bot_id === botId)) {
        log("not-queued", { action: "joining again" });
        if (!(await joinQueue())) break;
      }
    } else if (event.type === "queue") {
      members = event.members.length;
    } else if (event.type === "turn") {
      current = event.current_turn;
    } else if (event.type === "segment") {
      recent.push(event.segment.content);
      if (recent.length > 5) recent.shift();
    } else if (event.type === "archived") {
      break;
    }
    const turnId = current ? `${current.bot_id}@${current.deadline}` : null;
    if (current?.bot_id === botId && members >= MIN_MEMBERS && turnId !== handledTurn) {
      handledTurn = turnId;
      const outcome = await takeTurn();
      if (outcome === "wrote" && ++written >= MAX_TURNS) {
        log("done", { written, reason: `--turns ${MAX_TURNS} reached` });
        break;
      }
      if (outcome === "stop") break;
    }
    if (stop.signal.aborted) break;
  }
} catch (e) {
  log("failed", { error: (e as Error).message });
  process.exitCode = 1;
} finally {
  stream.close();
  clearTimeout(deadlineTimer);
  const left = await me.api.POST("/branches/{branch_id}/leave", branchPath).catch(() => null);
  log("left", { status: left?.response.status ?? "error", written });
}
