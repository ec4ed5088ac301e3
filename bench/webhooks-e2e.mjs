// `npm run e2e:webhooks`: end to end against `npm run dev`. A real HTTP receiver on 127.0.0.1 takes the
// webhooks of two bots that pass the turn back and forth; every your_turn must arrive with a valid signature.
// Then the receiver goes down for the first attempts of a delivery, comes back, and the delivery still arrives.
// Writes bench/WEBHOOKS.md with the delivery latency (segment accepted → webhook received).
import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { NO_LIMITS, api, sleep, startDev, words } from "./lib.mjs";

const { values } = parseArgs({ options: { turns: { type: "string", default: "30" }, write: { type: "boolean", default: false } } });
const TURNS = Number(values.turns);
const PORT = 8793;
const RECEIVER_PORT = 8794;
const BASE = `http://127.0.0.1:${PORT}/api/v1`;
const secrets = {};
const arrivals = [];
let server;

function startReceiver() {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const who = req.url.slice(1);
      const ts = req.headers["x-service-timestamp"];
      const expected = `sha256=${createHmac("sha256", secrets[who]).update(`${ts}.${body}`).digest("hex")}`;
      arrivals.push({
        who,
        at: Date.now(),
        event: req.headers["x-service-event"],
        delivery: req.headers["x-service-delivery"],
        valid: expected === req.headers["x-service-signature"],
        json: JSON.parse(body),
      });
      res.writeHead(200).end("ok");
    });
  });
  return new Promise((resolve) => server.listen(RECEIVER_PORT, "127.0.0.1", resolve));
}
const stopReceiver = () => new Promise((resolve) => server.close(resolve));

async function waitForArrival(who, after, ms = 60_000) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) {
    const hit = arrivals.find((a) => a.who === who && a.at >= after && a.event === "your_turn");
    if (hit) return hit;
  }
  throw new Error(`no your_turn for ${who} within ${ms} ms`);
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

await startReceiver();
const app = await startDev(PORT, "bench/.tmp/e2e-state", ["--var", "ALLOW_PRIVATE_WEBHOOKS:true", ...NO_LIMITS]);
try {
  const call = api(BASE);
  const human = (
    await call("/auth/register", {
      body: { username: `e2e${Date.now()}`, email: `e2e${Date.now()}@example.com`, password: "e2e password", user_type: "human" },
    })
  ).access_token;
  const bots = {};
  for (const who of ["a", "b"]) {
    const reg = (
      await call("/auth/bot/register", { body: { name: `e2e-${who}-${Date.now()}`, model: "e2e", webhook_url: `http://127.0.0.1:${RECEIVER_PORT}/${who}` } })
    ).data;
    secrets[who] = reg.webhook_secret;
    bots[who] = (await call("/auth/bot/login", { body: { api_key: reg.api_key } })).access_token;
  }
  const story = (
    await call("/stories", {
      token: human,
      body: {
        title: "E2E",
        background: "Webhooks end to end.",
        starter: "Go.",
        initial_segments: [words(5), words(5), words(5)],
        language: "en",
        min_length: 3,
        max_length: 50,
      },
    })
  ).data;
  const branch = story.main_branch_id;
  const joinedAt = Date.now();
  await call(`/branches/${branch}/join`, { token: bots.a, body: {} });
  await waitForArrival("a", joinedAt);
  await call(`/branches/${branch}/join`, { token: bots.b, body: {} });

  const latencies = [];
  let turn = "a";
  for (let i = 0; i < TURNS; i++) {
    const seg = (await call(`/branches/${branch}/segments`, { token: bots[turn], body: { content: words(5) } })).data;
    const accepted = Date.parse(seg.created_at); // the server's acceptance time, same clock as the receiver
    turn = turn === "a" ? "b" : "a";
    const hit = await waitForArrival(turn, accepted);
    latencies.push(hit.at - accepted);
  }

  await stopReceiver();
  await call(`/branches/${branch}/segments`, { token: bots[turn], body: { content: words(5) } });
  const downAt = Date.now();
  turn = turn === "a" ? "b" : "a";
  await sleep(3000);
  await startReceiver();
  const late = await waitForArrival(turn, downAt, 120_000);

  const invalid = arrivals.filter((a) => !a.valid).length;
  const report = [
    "# Webhooks end to end",
    "",
    `Run ${new Date().toISOString()} against \`npm run dev\` (local queue, max_batch_timeout 0) with a receiver on 127.0.0.1.`,
    "",
    `- your_turn deliveries: ${latencies.length + 2} over ${TURNS} turn passes, ${invalid} with an invalid signature.`,
    `- latency, segment accepted (its created_at) → webhook received: median ${pct(latencies, 50)} ms, p95 ${pct(latencies, 95)} ms (min ${Math.min(...latencies)}, max ${Math.max(...latencies)}).`,
    `- receiver down for 3 s: the your_turn arrived ${((late.at - downAt) / 1000).toFixed(1)} s after the segment, by retry (delivery ${late.delivery}).`,
    "",
  ].join("\n");
  if (values.write) writeFileSync("bench/WEBHOOKS.md", report); // a tracked file: only when asked
  console.log(report);
  if (invalid) process.exitCode = 1;
} finally {
  app.stop();
  await stopReceiver().catch(() => {});
}
process.exit(process.exitCode ?? 0);
