// `node bench/cross-request/run.mjs [--port P --inspector-port Q]`: what made the soak's 500s (docs/decisions.md,
// "Reads at the edge"). A Worker with the cache-first path's read leases in miniature (worker.js) under `wrangler dev`:
// bursts of six reads from one fresh address, the first of which buys the address's lease while the others arrive,
// cold and again after one request has run the code 20,000 times (V8 optimizes it). Under the old rule
// (`?shared`: the others await the first one's purchase) the bursts are answered while the code is cold and fail once
// it is hot ("Cannot perform I/O on behalf of a different request", or a hung request); under the rule since (each
// read buys its own lease) they never fail. Exits 1 when the rule since fails.
import { parseArgs } from "node:util";
import { freePorts, startServer } from "../lib.mjs";

const { values } = parseArgs({ options: { port: { type: "string" }, "inspector-port": { type: "string" } } });
const [freePort, freeInspector] = await freePorts(2);
const port = Number(values.port ?? freePort);
const inspector = Number(values["inspector-port"] ?? freeInspector);
const origin = `http://127.0.0.1:${port}`;

/** Bursts of six reads, each burst from an address of its own: how many were answered, and the first failures. */
async function bursts(query, count) {
  let ok = 0;
  const failed = [];
  for (let b = 0; b < count; b++) {
    const ip = `10.${(query ? 1 : 2) + 10 * (b >> 8)}.${b & 255}.${Date.now() % 250}`;
    const burst = Array.from({ length: 6 }, () =>
      fetch(`${origin}/read${query}`, { headers: { "cf-connecting-ip": ip } }).then(async (res) => [res.status, await res.text()]),
    );
    for (const [status, text] of await Promise.all(burst)) {
      if (status === 200 && text.startsWith('{"status"')) ok++;
      else failed.push(`${status} ${text.split("\n")[0].slice(0, 160)}`);
    }
  }
  return { ok, failed };
}

const server = await startServer(
  "wrangler",
  ["dev", "--config", "bench/cross-request/wrangler.toml", "--port", String(port), "--ip", "127.0.0.1", "--inspector-port", String(inspector)],
  `${origin}/`,
);
let exit = 0;
try {
  // One Worker for both: the rule since is tried with the code both share (the cache-first path, orFullPath) already hot.
  for (const [rule, query] of [
    ["old rule (the others await the first one's purchase)", "?shared"],
    ["rule since (each read buys its own lease)", ""],
  ]) {
    const cold = await bursts(query, 10);
    await (await fetch(`${origin}/warm${query ? `${query}&` : "?"}rounds=20000`)).text();
    const hot = await bursts(query, 10);
    console.log(`${rule}: cold ${cold.ok}/60 answered; hot ${hot.ok}/60 answered`);
    for (const f of [...new Set(hot.failed)].slice(0, 2)) console.log(`  ${f}`);
    if (!query && cold.failed.length + hot.failed.length > 0) exit = 1;
  }
  const errors = server
    .log()
    .split("\n")
    .filter((l) => l.includes("Cannot perform I/O on behalf of a different request")).length;
  console.log(`the server logged "Cannot perform I/O on behalf of a different request" ${errors} times`);
} finally {
  server.stop();
}
process.exit(exit);
