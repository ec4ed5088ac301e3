// The import rule must fail on what it forbids: each case plants one breach in a copy of src/ and runs the check
// as `npm run lint` does (its exit code and its message). Run by `npm run lint` (`node --test`).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";

const src = path.join(import.meta.dirname, "..", "src");
const script = path.join(import.meta.dirname, "check-imports.mjs");
const copies = [];
after(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** Copies src/, lets `plant` change the copy, and runs the check on it. */
function checkWith(plant) {
  const dir = mkdtempSync(path.join(tmpdir(), "check-imports-"));
  copies.push(dir);
  cpSync(src, dir, { recursive: true });
  plant(dir);
  const run = spawnSync(process.execPath, [script, "--src", dir], { encoding: "utf8" });
  return { code: run.status, out: run.stderr };
}
const importInto = (dir, file, line) => appendFileSync(path.join(dir, file), `\n${line}\n`);

test("the tree as it is passes", () => {
  assert.deepEqual(
    checkWith(() => {}),
    { code: 0, out: "" },
  );
});

test("an upward import inside the domain fails (shared importing a reading model)", () => {
  const { code, out } = checkWith((dir) => importInto(dir, "domain/shared/actor.ts", 'import type { readerHome } from "../reading/reader";'));
  assert.equal(code, 1);
  assert.match(out, /src\/domain\/shared\/actor\.ts imports src\/domain\/reading\/reader\.ts \(domain\/reading is above domain\/shared\)/);
});

test("a capability importing a later capability fails (stories importing community)", () => {
  const { code, out } = checkWith((dir) => importInto(dir, "domain/stories/pins.ts", 'import { castVote } from "../community/votes";'));
  assert.equal(code, 1);
  assert.match(out, /domain\/stories\/pins\.ts imports src\/domain\/community\/votes\.ts/);
});

test("lib importing the database layer fails", () => {
  const { code, out } = checkWith((dir) => importInto(dir, "lib/errors.ts", 'import type { Db } from "../db/client";'));
  assert.equal(code, 1);
  assert.match(out, /src\/lib\/errors\.ts imports src\/db\/client\.ts/);
});

test("a door importing a room's module other than its client fails", () => {
  const { code, out } = checkWith((dir) => importInto(dir, "routes/votes.ts", 'import type { BranchRoom } from "../durable/branch";'));
  assert.equal(code, 1);
  assert.match(out, /a room's module/);
});

test("an import cycle fails", () => {
  const { code, out } = checkWith((dir) => {
    writeFileSync(path.join(dir, "lib/cycle-a.ts"), 'import { b } from "./cycle-b";\nexport const a = () => b;\n');
    writeFileSync(path.join(dir, "lib/cycle-b.ts"), 'import { a } from "./cycle-a";\nexport const b = () => a;\n');
  });
  assert.equal(code, 1);
  assert.match(out, /import cycle: lib\/cycle-[ab]\.ts -> lib\/cycle-[ab]\.ts -> lib\/cycle-[ab]\.ts/);
});

test("a file in a folder no layer names fails", () => {
  const { code, out } = checkWith((dir) => {
    cpSync(path.join(dir, "lib/round.ts"), path.join(dir, "domain/round.ts"));
  });
  assert.equal(code, 1);
  assert.match(out, /src\/domain\/round\.ts is in no layer/);
});
