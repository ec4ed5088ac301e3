// The npm registry this project is built against serves only Linux builds of workerd and Biome, so `npm install`
// leaves their other optional platform packages out of package-lock.json and `npm ci` then refuses
// the lock as out of sync. This adds the entries a full registry would have written; npm skips them on
// a machine of another platform, exactly as it does for packages it could resolve.
// Run after any `npm install` that changes the lock: `node scripts/lock-platforms.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const WORKERD = {
  "darwin-64": ["darwin", "x64"],
  "darwin-arm64": ["darwin", "arm64"],
  "linux-64": ["linux", "x64"],
  "linux-arm64": ["linux", "arm64"],
  "windows-64": ["win32", "x64"],
};

/** The platform of an optional package, by the naming of the two families this registry serves only for Linux. */
function platformOf(dep) {
  if (dep.startsWith("@cloudflare/workerd-")) {
    const p = WORKERD[dep.slice("@cloudflare/workerd-".length)];
    return p && { os: p[0], cpu: p[1], license: "Apache-2.0", engines: { node: ">=16" } };
  }
  const m = /^@biomejs\/cli-(android|darwin|linux|win32)-(arm64|x64)(-musl)?$/.exec(dep);
  return m && { os: m[1], cpu: m[2], ...(m[3] ? { libc: ["musl"] } : {}), license: "MIT OR Apache-2.0", engines: { node: ">=14.21.3" } };
}

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
let added = 0;
for (const [path, meta] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const platform = platformOf(dep);
    if (!platform) continue;
    const parent = path.slice(0, path.lastIndexOf("node_modules/"));
    const candidates = [`${path}/node_modules/${dep}`, `${parent}node_modules/${dep}`, `node_modules/${dep}`];
    if (candidates.some((p) => lock.packages[p]?.version === version)) continue;
    const { os, cpu, ...rest } = platform;
    lock.packages[`${parent}node_modules/${dep}`] = { version, cpu: [cpu], optional: true, os: [os], ...rest };
    added++;
  }
}
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platforms: added ${added} entries`);
