// `npm run bench:ab [-- --base REV --case uncached|cached|page|home|stories|search|write|turns --rounds N --seconds S --connections C --logged
//   --port P --inspector-port I]`
// (`--connections`, 10 by default, is wrk's; `turns` has its own four bots): this
// working tree (B) against another revision (A, default HEAD), both under `wrangler dev` at once (silent unless
// `--logged`, which turns the access log on in both; limits lifted; A on port P, 8797 by default, B on P+1, their inspectors on
// I and I+1, P+1000 by default: on a shared machine, ports of one's own), each seeded
// the same way, then one case A/B, B/A, A/B…. Prints each round's CPU per request (workerd user+system over the round's
// requests) and requests per second, and the medians of the per-round ratios B/A: how a change moves a request's
// cost, measured so that a noisy machine moves both sides alike. A change's evidence, not a target.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { NO_LIMITS, ensureWrk, fromClients, load, median, startDev, workerdCpuMs } from "./lib.mjs";
import { seed, spreadWrites } from "./seed.mjs";
import { fourBots } from "./turns.mjs";

const { values } = parseArgs({
  options: {
    base: { type: "string", default: "HEAD" },
    case: { type: "string", default: "uncached" },
    rounds: { type: "string", default: "6" },
    seconds: { type: "string", default: "3" },
    connections: { type: "string", default: "10" },
    logged: { type: "boolean", default: false },
    port: { type: "string", default: "8797" },
    "inspector-port": { type: "string" },
  },
});
const TMP = path.resolve("bench/.tmp/ab");
const BASE_TREE = path.join(TMP, "base");

/** A checkout of the base revision beside this one, sharing node_modules. */
function checkoutBase() {
  if (existsSync(BASE_TREE)) execFileSync("git", ["worktree", "remove", "--force", BASE_TREE]);
  execFileSync("git", ["worktree", "add", "--detach", BASE_TREE, values.base], { stdio: "ignore" });
  symlinkSync(path.resolve("node_modules"), path.join(BASE_TREE, "node_modules"));
  execFileSync(process.execPath, ["scripts/copy-assets.mjs"], { cwd: BASE_TREE, stdio: "ignore" });
}

const PORT = Number(values.port);
const INSPECTOR_PORT = Number(values["inspector-port"] ?? PORT + 1000);

async function start(name, cwd, port, inspectorPort) {
  const state = path.join(TMP, `${name}-state`);
  rmSync(state, { recursive: true, force: true });
  mkdirSync(state, { recursive: true });
  const base = `http://127.0.0.1:${port}/api/v1`;
  const server = await startDev(port, state, ["--inspector-port", String(inspectorPort), "--var", `LOG_REQUESTS:${values.logged}`, ...NO_LIMITS], { cwd });
  return { server, origin: `http://127.0.0.1:${port}`, base, data: await seed(base) };
}

const CASES = {
  cached: (s) => ({ url: s.origin, requests: fromClients({ path: `/api/v1/branches/${s.data.hot.main_branch_id}/segments` }) }),
  page: (s) => ({ url: s.origin, requests: fromClients({ path: `/stories/${s.data.hot.id}` }) }),
  // The web reader's list (the home page), past the micro-cache as `stories` is.
  home: (s) => ({ url: s.origin, requests: fromClients({ path: "/", headers: { "x-d1-bookmark": s.data.bookmark } }) }),
  uncached: (s) => ({
    url: s.origin,
    requests: fromClients({ path: `/api/v1/branches/${s.data.hot.main_branch_id}/segments`, headers: { "x-d1-bookmark": s.data.bookmark } }),
  }),
  stories: (s) => ({ url: s.origin, requests: fromClients({ path: "/api/v1/stories", headers: { "x-d1-bookmark": s.data.bookmark } }) }),
  // A search past the micro-cache: 41 stories match by their tag, and the hot story's segments by a common word.
  search: (s) => ({ url: s.origin, requests: fromClients({ path: "/api/v1/search?q=bench", headers: { "x-d1-bookmark": s.data.bookmark } }) }),
  write: (s) => ({ url: s.origin, requests: spreadWrites(s.data) }),
  turns: () => null, // fourBots (bench/turns.mjs), not a load
};

/** The four bots of `npm run bench` taking turns on one branch: accepted segments per second, not requests. */
async function turns(side) {
  const tokens = side.data.bots.map((b) => b.token);
  const t = await fourBots(side.base, side.data.turns, tokens, Number(values.seconds));
  const bad = Object.entries(t.statuses).reduce((n, [s, k]) => n + (s === "201" || s === "403" ? 0 : k), 0);
  return { rps: t.rps, total: t.total, non2xx: bad };
}

async function measured(side) {
  const before = workerdCpuMs(side.server.child.pid);
  const r =
    values.case === "turns" ? await turns(side) : await load({ duration: Number(values.seconds), connections: Number(values.connections), ...side.opts });
  return { rps: r.rps, cpu: (workerdCpuMs(side.server.child.pid) - before) / Math.max(1, r.total), bad: r.non2xx };
}

if (values.case !== "turns") ensureWrk();
mkdirSync(TMP, { recursive: true });
checkoutBase();
const a = await start("a", BASE_TREE, PORT, INSPECTOR_PORT);
const b = await start("b", process.cwd(), PORT + 1, INSPECTOR_PORT + 1);
try {
  a.opts = CASES[values.case](a);
  b.opts = CASES[values.case](b);
  if (values.case !== "turns") await Promise.all([load({ duration: 2, ...a.opts }), load({ duration: 2, ...b.opts })]); // warm both
  const rounds = [];
  for (let i = 0; i < Number(values.rounds); i++) {
    // A then B, then B then A: neither side always runs second (after the other's load, or on a warmer machine).
    const ra = i % 2 === 0 ? await measured(a) : undefined;
    const rb = await measured(b);
    const ra2 = ra ?? (await measured(a));
    rounds.push({ ra: ra2, rb });
    console.log(
      `round ${i + 1}: A ${ra2.cpu.toFixed(2)} ms, ${ra2.rps.toFixed(0)}/s; B ${rb.cpu.toFixed(2)} ms, ${rb.rps.toFixed(0)}/s; non-2xx ${ra2.bad}/${rb.bad}`,
    );
  }
  const cpuRatios = rounds.map((r) => r.rb.cpu / r.ra.cpu);
  const cpu = median(cpuRatios);
  const rps = median(rounds.map((r) => r.rb.rps / r.ra.rps));
  console.log(
    `${values.case} (${values.case === "turns" ? "four bots" : `${values.connections} connections`}${values.logged ? ", logged" : ""}): B (this tree) against A (${values.base}): CPU per request ×${cpu.toFixed(3)}, requests/s ×${rps.toFixed(3)} (medians of ${rounds.length} rounds)`,
  );
  // The spread says whether the median means anything: on this machine a change of a few per cent hides in it.
  console.log(
    `per-round CPU ratios, sorted: ${cpuRatios
      .sort((x, y) => x - y)
      .map((r) => r.toFixed(3))
      .join(" ")}`,
  );
} finally {
  a.server.stop();
  b.server.stop();
  execFileSync("git", ["worktree", "remove", "--force", BASE_TREE]);
}
process.exit(0);
