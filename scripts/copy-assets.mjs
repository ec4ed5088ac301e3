// Copies the API reference's standalone bundle from the pinned `@scalar/api-reference` package (exact version in
// package.json) into the static assets directory, so `/api/v1/docs` needs nothing but this Worker.
// Runs before dev, test, deploy and check:deploy (package.json `pre…` scripts) and from the browser-test harness.
// The copied file (4 MB) is git-ignored: it is a build product of package-lock.json, not a source.
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

export const BUNDLE_TARGET = path.join(root, "public/api-reference/standalone.js");

export function copyAssets({ quiet = false } = {}) {
  const pinned = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).devDependencies["@scalar/api-reference"];
  const dir = path.join(root, "node_modules/@scalar/api-reference");
  const source = path.join(dir, "dist/browser/standalone.js");
  if (!existsSync(source)) throw new Error(`${source} is missing: run npm install`);
  const { version } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  if (version !== pinned) throw new Error(`@scalar/api-reference ${version} is installed but package.json pins ${pinned}: run npm install`);
  mkdirSync(path.dirname(BUNDLE_TARGET), { recursive: true });
  const same = existsSync(BUNDLE_TARGET) && statSync(BUNDLE_TARGET).size === statSync(source).size && readFileSync(BUNDLE_TARGET).equals(readFileSync(source));
  if (!same) copyFileSync(source, BUNDLE_TARGET);
  if (!quiet) console.log(`${same ? "up to date" : "copied"}: @scalar/api-reference@${version} standalone bundle → public/api-reference/standalone.js`);
  return { version };
}

if (import.meta.url === `file://${process.argv[1]}`) copyAssets();
