// `npm run e2e:bots [-- --turns 30 --write]`: three reference bots (client/bot/bot.ts) with no webhook address
// take turns on a story's main line against `npm run dev`, following only the live stream. A human creates the
// story through the API; the bots register, join and write until `--turns` segments are written in all (each bot
// is bounded to its share), then are stopped. Reports the time from a segment's acceptance (its created_at) to the
// next bot's `turn` line for itself (median, p95), and checks the read-back order: contiguous sequence_order, the
// bots' segments in strict rotation. Prints the figures; writes bench/BOTS.md only with --write.
// Everything listens on 127.0.0.1 only; every wait is bounded.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { api, freePort, NO_LIMITS, sleep, startDev, words } from "./lib.mjs";

const { values } = parseArgs({ options: { turns: { type: "string", default: "30" }, write: { type: "boolean", default: false }, port: { type: "string" } } });
const TURNS = Number(values.turns);
const BOTS = 3;
const PORT = values.port ? Number(values.port) : await freePort();
const BASE = `http://127.0.0.1:${PORT}/api/v1`;
const tmp = mkdtempSync(path.join(tmpdir(), "storyloom-bots-e2e-"));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

function startBot(name, branch) {
  const child = spawn(
    "tsx",
    [
      "client/bot/bot.ts",
      "--base",
      BASE,
      "--branch",
      branch,
      "--name",
      name,
      "--keys-dir",
      path.join(tmp, "keys"),
      "--turns",
      String(Math.ceil(TURNS / BOTS)),
      "--min-members",
      String(BOTS),
      "--minutes",
      "5",
    ],
    { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, LLM_BASE_URL: "", LLM_API_KEY: "", LLM_MODEL: "" } },
  );
  const lines = [];
  let partial = "";
  child.stdout.on("data", (d) => {
    const parts = (partial + d).split("\n");
    partial = parts.pop();
    for (const line of parts) {
      lines.push(line);
      if (process.env.E2E_VERBOSE) console.log(line);
    }
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  return { name, child, lines, exited, stderr: () => stderr };
}

async function stopBot(bot) {
  try {
    process.kill(-bot.child.pid, "SIGTERM");
  } catch {}
  const code = await Promise.race([bot.exited, sleep(10_000).then(() => "timeout")]);
  if (code === "timeout") {
    try {
      process.kill(-bot.child.pid, "SIGKILL");
    } catch {}
  }
  return code;
}

/** `<iso> <name> <event> k=v …` → {at, name, event, fields}. */
function parseLine(line) {
  const [iso, name, event, ...rest] = line.split(" ");
  const fields = Object.fromEntries(rest.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
  return { at: Date.parse(iso), name, event, fields };
}

const server = await startDev(PORT, path.join(tmp, "state"), NO_LIMITS);
// The answer must come from our own server, not from something else that held the port.
for (let i = 0; i < 50 && !server.log().includes(`Ready on http://127.0.0.1:${PORT}`); i++) await sleep(100);
if (!server.log().includes(`Ready on http://127.0.0.1:${PORT}`) || server.child.exitCode !== null) {
  server.stop();
  throw new Error(`port ${PORT} answered, but not from the server this run started:\n${server.log()}`);
}
const bots = [];
let exitCode = 0;
try {
  const call = api(BASE);
  const stamp = Date.now();
  const human = (
    await call("/auth/register", { body: { username: `e2ebots${stamp}`, email: `e2ebots${stamp}@example.com`, password: "e2e password", user_type: "human" } })
  ).access_token;
  const story = (
    await call("/stories", {
      token: human,
      body: {
        title: "Bots without a public address",
        background: "Three writers who cannot be reached by webhook take turns by listening to the live stream of the branch.",
        starter: "The lighthouse keeper found a radio that only received.",
        initial_segments: [words(8, "static"), words(8, "signal"), words(8, "harbour")],
        language: "en",
        min_length: 8,
        max_length: 40,
      },
    })
  ).data;
  const branch = story.main_branch_id;
  const before = (await call(`/branches/${branch}`)).data.segments_count;

  const started = Date.now();
  for (let i = 0; i < BOTS; i++) bots.push(startBot(`e2e-bot-${String.fromCharCode(97 + i)}-${stamp}`, branch));

  // Wait (bounded) until the bots have written TURNS segments in all.
  let written = 0;
  for (const end = Date.now() + 4 * 60_000; Date.now() < end; await sleep(200)) {
    written = (await call(`/branches/${branch}`)).data.segments_count - before;
    if (written >= TURNS) break;
    if (bots.every((b) => b.child.exitCode !== null)) break;
  }
  const elapsed = Date.now() - started;
  await Promise.all(bots.map(stopBot));
  if (written < TURNS)
    throw new Error(`only ${written} of ${TURNS} segments written\n${bots.map((b) => `${b.lines.slice(-15).join("\n")}\n${b.stderr()}`).join("\n")}`);

  // Read back.
  const segments = (await call(`/branches/${branch}/segments?limit=100`)).data.segments;
  const orders = segments.map((s) => s.sequence_order);
  const contiguous = orders.every((o, i) => o === i + 1);
  const botSegments = segments.filter((s) => s.author_type === "bot");
  const ids = {};
  for (const b of bots) {
    const reg = b.lines.map(parseLine).find((l) => l.event === "registered" || l.event === "logged-in");
    ids[reg.fields.bot_id] = b;
  }
  // The queue's order is join order; each bot printed its place (`joined order=N`) when it joined.
  const placeOf = (id) => Number(ids[id].lines.map(parseLine).find((l) => l.event === "joined" || l.event === "already-queued")?.fields.order);
  const order = Object.keys(ids).sort((a, b) => placeOf(a) - placeOf(b));
  const rotation = botSegments.every((s, i) => i === 0 || order.indexOf(s.bot_id) === (order.indexOf(botSegments[i - 1].bot_id) + 1) % order.length);

  // Acceptance (created_at) → the next bot's own `turn` line.
  const latencies = [];
  for (let i = 0; i + 1 < botSegments.length; i++) {
    const accepted = Date.parse(botSegments[i].created_at);
    const next = ids[botSegments[i + 1].bot_id];
    const line = next?.lines.map(parseLine).find((l) => l.event === "turn" && l.fields.mine === "true" && l.at >= accepted - 2);
    if (line) latencies.push(line.at - accepted);
  }
  // Turn line → the same bot's segment accepted (composing + writing).
  const writeTimes = [];
  for (let i = 1; i < botSegments.length; i++) {
    const accepted = Date.parse(botSegments[i].created_at);
    const me = ids[botSegments[i].bot_id];
    const turnLine = me?.lines
      .map(parseLine)
      .filter((l) => l.event === "turn" && l.fields.mine === "true" && l.at <= accepted + 2)
      .at(-1);
    if (turnLine) writeTimes.push(accepted - turnLine.at);
  }
  const counts = Object.fromEntries(bots.map((b) => [b.name, b.lines.filter((l) => l.includes(" wrote ")).length]));
  const figures = {
    bot_segments: botSegments.length,
    contiguous,
    strict_rotation: rotation,
    sequence: `${orders[0]}..${orders.at(-1)} (${orders.length} segments, ${before} written at creation)`,
    per_bot: counts,
    accept_to_next_turn_ms: { n: latencies.length, median: pct(latencies, 50), p95: pct(latencies, 95), max: Math.max(...latencies) },
    turn_to_accept_ms: { n: writeTimes.length, median: pct(writeTimes, 50), p95: pct(writeTimes, 95) },
    wall_seconds: +(elapsed / 1000).toFixed(1),
  };
  console.log(JSON.stringify(figures, null, 2));
  if (!contiguous || !rotation || latencies.length < botSegments.length - 1) exitCode = 1;

  if (values.write) {
    const md = `# Bots without a public address: \`npm run e2e:bots\`

${new Date().toISOString().slice(0, 10)}: three reference bots (\`npm run bot\`, offline writer, no webhook address) on one main line
of a story (min_length 8, max_length 40 words) against \`npm run dev\` (per-account limits lifted), each following only
the branch's live stream (\`GET /branches/{id}/live\`). Latencies are measured on one machine's clock: the segment's
\`created_at\` (set by the Worker when it accepts the write) to the line the next bot prints when its \`turn\` frame arrives.

| figure | value |
|---|---|
| bot segments written | ${figures.bot_segments} (${Object.values(counts).join(" / ")}) |
| sequence_order read back | ${figures.sequence}, contiguous: ${contiguous ? "yes" : "**no**"} |
| strict rotation (join order ${order.map((id) => ids[id].name.split("-")[2]).join(" → ")}) | ${rotation ? "yes" : "**no**"} |
| segment accepted → next bot's \`turn\` frame | median ${figures.accept_to_next_turn_ms.median} ms, p95 ${figures.accept_to_next_turn_ms.p95} ms, max ${figures.accept_to_next_turn_ms.max} ms (n = ${latencies.length}) |
| \`turn\` frame → that bot's segment accepted | median ${figures.turn_to_accept_ms.median} ms, p95 ${figures.turn_to_accept_ms.p95} ms |
| wall time for ${figures.bot_segments} turns | ${figures.wall_seconds} s (including three registrations, logins and joins) |
`;
    writeFileSync("bench/BOTS.md", md);
    console.log("wrote bench/BOTS.md");
  }
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await Promise.all(bots.filter((b) => b.child.exitCode === null).map(stopBot));
  server.stop();
  await sleep(500);
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(exitCode);
