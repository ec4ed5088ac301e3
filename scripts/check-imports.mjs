#!/usr/bin/env node
// The layering the architecture promises (docs/architecture.md, "Layers"): every file of src/ sits in one layer, and
// a file imports only its own layer and lower ones (type-only imports count). Inside src/domain/ each capability
// folder is a layer of its own, in the order below. Besides: no import cycle between files; and no door (src/routes,
// src/web, src/mcp, src/oauth) imports a room's module other than its caller-side client
// (src/durable/branch-client.ts). Prints each breach on one line and exits 1; silent and 0 when there is none.
// `--src DIR` checks another tree (scripts/check-imports.test.mjs plants breaches in a copy of src/).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The layers, lowest first: a file may import from its own layer or one listed before it. An entry is a folder
 * or a file of src/; the longest entry that contains a file places it.
 */
export const LAYERS = [
  ["config.ts", "env.ts", "worker-configuration.d.ts"],
  ["lib"],
  ["db"],
  ["schemas"],
  ["turns"],
  // The domain, by capability: what most features build on first, the read models and exports last.
  ["domain/shared"],
  ["domain/standing"],
  ["domain/events"],
  ["domain/discovery"],
  ["domain/following"],
  ["domain/accounts"],
  ["domain/stories"],
  ["domain/community"],
  ["domain/bots"],
  ["domain/moderation"],
  ["domain/reading"],
  ["domain/export"],
  ["durable"],
  ["usecases"],
  ["queue"],
  ["context.ts"],
  ["middleware"],
  ["routes", "web", "mcp", "oauth"],
  ["app.ts"],
  ["index.ts"],
];
const DOORS = ["routes", "web", "mcp", "oauth"];
const ROOM_CLIENTS = new Set(["durable/branch-client.ts"]);

const files = (dir) =>
  readdirSync(dir).flatMap((name) => (statSync(path.join(dir, name)).isDirectory() ? files(path.join(dir, name)) : [path.join(dir, name)]));

/** The src files a file imports (static `import`/`export … from`, type-only included; packages skipped). */
function importsOf(file) {
  const text = readFileSync(file, "utf8");
  const found = [];
  for (const [, spec] of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/g)) {
    const base = path.resolve(path.dirname(file), spec);
    const hit = [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts")].find((p) => existsSync(p) && statSync(p).isFile());
    if (hit) found.push(hit);
  }
  return found;
}

/** A file's layer (its index in LAYERS), by the longest entry that contains it; -1 when none does. */
function layerOf(relPath) {
  const unix = relPath.split(path.sep).join("/");
  let best = { index: -1, length: -1 };
  LAYERS.forEach((entries, index) => {
    for (const entry of entries) {
      if ((unix === entry || unix.startsWith(`${entry}/`)) && entry.length > best.length) best = { index, length: entry.length };
    }
  });
  return best.index;
}

/** Every breach of the layering in the tree at `src`, one line each. */
export function breachesIn(src) {
  const sources = files(src).filter((f) => /\.tsx?$/.test(f) && !f.endsWith(".d.ts"));
  const graph = new Map(sources.map((f) => [f, importsOf(f)]));
  const rel = (f) => path.relative(src, f).split(path.sep).join("/");
  const breaches = [];

  for (const [file, deps] of graph) {
    const layer = layerOf(rel(file));
    if (layer < 0) {
      breaches.push(`src/${rel(file)} is in no layer (place its folder in LAYERS, scripts/check-imports.mjs)`);
      continue;
    }
    for (const dep of deps) {
      const depLayer = layerOf(rel(dep));
      if (depLayer > layer) breaches.push(`src/${rel(file)} imports src/${rel(dep)} (${LAYERS[depLayer].join(", ")} is above ${LAYERS[layer].join(", ")})`);
    }
    if (!DOORS.includes(rel(file).split("/")[0])) continue;
    for (const dep of deps) {
      if (rel(dep).startsWith("durable/") && !ROOM_CLIENTS.has(rel(dep))) breaches.push(`src/${rel(file)} imports src/${rel(dep)} (a room's module)`);
    }
  }

  // Cycles: a depth-first search that reports each back edge's cycle once.
  const state = new Map();
  const stack = [];
  const seen = new Set();
  function visit(file) {
    state.set(file, "open");
    stack.push(file);
    for (const dep of graph.get(file) ?? []) {
      if (state.get(dep) === "open") {
        const cycle = stack.slice(stack.indexOf(dep)).map(rel);
        const key = [...cycle].sort().join(" ");
        if (!seen.has(key)) {
          seen.add(key);
          breaches.push(`import cycle: ${[...cycle, rel(dep)].join(" -> ")}`);
        }
      } else if (!state.has(dep)) visit(dep);
    }
    stack.pop();
    state.set(file, "done");
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return breaches;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf("--src");
  const src = at > 0 ? path.resolve(process.argv[at + 1]) : path.join(import.meta.dirname, "..", "src");
  const breaches = breachesIn(src);
  for (const breach of breaches) console.error(breach);
  process.exit(breaches.length ? 1 : 0);
}
