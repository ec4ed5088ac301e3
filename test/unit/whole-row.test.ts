import { env } from "cloudflare:workers";
import { eq, getTableName, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { branches, stories } from "../../src/db/schema";
import { WholeRow } from "../../src/db/whole-row";
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
