#!/usr/bin/env node
// The layering the architecture promises (docs/decisions.md, "Architecture"): no import cycle in src/ (type-only
// imports count); no door (src/routes, src/web, src/mcp, src/oauth) imports a room's module other than its caller-side client
// (src/durable/branch-client.ts); and nothing below the doors imports a door, the middleware or the request's
// context (src/context.ts, src/app.ts, src/index.ts). Prints each breach on one line and exits 1; silent and 0
// when there is none.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = path.join(import.meta.dirname, "..");
const src = path.join(root, "src");
const DOORS = ["routes", "web", "mcp", "oauth"];
/** The top of the layering: the doors, their middleware, and the files that assemble them. */
const TOP = new Set([...DOORS, "middleware", "context.ts", "app.ts", "index.ts"]);
const ROOM_CLIENTS = new Set(["durable/branch-client.ts"]);

const files = (dir) =>
  readdirSync(dir).flatMap((name) => (statSync(path.join(dir, name)).isDirectory() ? files(path.join(dir, name)) : [path.join(dir, name)]));
const sources = files(src).filter((f) => /\.tsx?$/.test(f) && !f.endsWith(".d.ts"));

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

const graph = new Map(sources.map((f) => [f, importsOf(f)]));
const rel = (f) => path.relative(src, f);
const breaches = [];

const top = (f) => TOP.has(rel(f).split(path.sep)[0]);

for (const [file, deps] of graph) {
  if (!top(file)) {
    for (const dep of deps) if (top(dep)) breaches.push(`src/${rel(file)} imports src/${rel(dep)} (a door, the middleware or the context, from below)`);
    continue;
  }
  if (!DOORS.includes(rel(file).split(path.sep)[0])) continue;
  for (const dep of deps) {
    if (rel(dep).startsWith(`durable${path.sep}`) && !ROOM_CLIENTS.has(rel(dep))) breaches.push(`src/${rel(file)} imports src/${rel(dep)} (a room's module)`);
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

for (const breach of breaches) console.error(breach);
process.exit(breaches.length ? 1 : 0);
