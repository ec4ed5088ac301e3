// The npm registry this project is built against serves only Linux builds of workerd, so `npm install`
// leaves workerd's other optional platform packages out of package-lock.json and `npm ci` then refuses
// the lock as out of sync. This adds the entries a full registry would have written; npm skips them on
// a machine of another platform, exactly as it does for packages it could resolve.
// Run after any `npm install` that changes the lock: `node scripts/lock-platforms.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const PLATFORMS = { "darwin-64": ["darwin", "x64"], "darwin-arm64": ["darwin", "arm64"], "linux-64": ["linux", "x64"], "linux-arm64": ["linux", "arm64"], "windows-64": ["win32", "x64"] };
const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
let added = 0;
for (const [path, meta] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const suffix = dep.replace("@cloudflare/workerd-", "");
    if (!dep.startsWith("@cloudflare/workerd-") || !PLATFORMS[suffix]) continue;
    const parent = path.slice(0, path.length - "node_modules/workerd".length);
    const candidates = [`${path}/node_modules/${dep}`, `${parent}node_modules/${dep}`, `node_modules/${dep}`];
    if (candidates.some((p) => lock.packages[p]?.version === version)) continue;
    const [os, cpu] = PLATFORMS[suffix];
    lock.packages[`${parent}node_modules/${dep}`] = { version, cpu: [cpu], license: "Apache-2.0", optional: true, os: [os], engines: { node: ">=16" } };
    added++;
  }
}
writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
console.log(`lock-platforms: added ${added} entries`);
