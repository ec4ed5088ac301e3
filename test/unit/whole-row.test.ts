import { env } from "cloudflare:workers";
import { eq, getTableName, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { branchSummaries, branches, stories } from "../../src/db/schema";
import { WholeRow, rowWhere } from "../../src/db/whole-row";
import { createStory, registerHuman } from "../helpers";

// WholeRow stands in for Drizzle's `select().from(table)`: the same keys, values and types, JSON and booleans included.
describe("WholeRow: a raw whole-row select answers as Drizzle's select()", () => {
  it.each([
    ["a story (JSON story pack, nulls)", stories, "s", (id: string) => eq(stories.id, id), (story: { id: string }) => story.id],
    ["a main line (boolean is_main)", branches, "b", (id: string) => eq(branches.id, id), (story: { main_branch_id: string }) => story.main_branch_id],
  ] as const)("%s", async (_, table, alias, where, idOf) => {
    const owner = await registerHuman();
    const story = await createStory(owner.token, { story_pack: { world: "a harbour town", characters: ["Ada"] } });
    const db = getDb(env.DB);
    const id = idOf(story);
    const expected = await db.select().from(table).where(where(id));
    const row = new WholeRow(table, alias);
    const rows = await row.query(db, sql`FROM ${sql.raw(`${getTableName(table)} ${alias}`)} WHERE ${sql.raw(alias)}.id = ${id}`);
    expect(rows.map(row.decode)).toStrictEqual(expected);
  });
});

describe("rowWhere: a conditional INSERT of a whole row", () => {
  it("inserts the row as `.values()` would, only while the condition holds", async () => {
    const story = await createStory((await registerHuman()).token);
    const db = getDb(env.DB);
    const row = {
      branchId: story.main_branch_id,
      summary: "s",
      coversUpTo: 4,
      source: "manual" as const,
      writtenBy: null,
      updatedAt: new Date().toISOString(),
    };
    const stored = () => db.select().from(branchSummaries).where(eq(branchSummaries.branchId, row.branchId));
    await db.insert(branchSummaries).select(rowWhere(branchSummaries, row, sql`0`));
    expect(await stored()).toEqual([]);
    await db.insert(branchSummaries).select(rowWhere(branchSummaries, row, sql`1`));
    expect(await stored()).toEqual([row]);
  });

  it("refuses a row missing a column (one with a default: `.values()` would apply it, and null would be bound)", async () => {
    const story = await createStory((await registerHuman()).token);
    const [branch] = await getDb(env.DB).select().from(branches).where(eq(branches.id, story.main_branch_id));
    const { segmentsCount: _, ...partial } = { ...branch, id: crypto.randomUUID() };
    expect(() => rowWhere(branches, partial as never, sql`1`)).toThrow(/branches\.segments_count/);
  });
});
