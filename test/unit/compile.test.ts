import { eq, type SQL, sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { compileSimple, prepared } from "../../src/db/compile";
import { segments } from "../../src/db/schema";
import { limitValues, underLimits } from "../../src/domain/stories/segment-quota";
import { inGoodStanding } from "../../src/domain/standing/rule";
import { type Viewer, branchShown, preparedForViewer, shownContent } from "../../src/domain/shared/visibility";
import { segmentColumns } from "../../src/domain/stories/segments";

const drizzleCompile = (query: SQL) => {
  const { sql: text, params } = new SQLiteAsyncDialect().sqlToQuery(query);
  return { sql: text, params };
};

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const limits = { perHour: 20, perDay: 100, perBranchPerHour: 2 };

describe("compileSimple: the same text and parameters as Drizzle's builder", () => {
  const cases: [string, SQL][] = [
    ["text only", sql`SELECT 1`],
    ["parameters of every plain kind", sql`SELECT ${"a"}, ${1}, ${1.5}, ${null}, ${true}, ${false}`],
    ["an undefined value writes nothing", sql`SELECT 1 ${undefined}`],
    ["nested fragments, raw text and joins", sql`SELECT ${sql`${"x"} AND ${sql.raw("y")}`} IN (${sql.join([sql`${1}`, sql`${2}`], sql`, `)})`],
    ["an empty fragment", sql`SELECT 1 ${sql``}`],
    ["a segment write's limits, per branch", underLimits(limitValues("u1", "b1", limits, NOW), true)],
    ["a segment write's limits, turn mode", underLimits(limitValues("u1", "b1", limits, NOW), false)],
    [
      "a bot's standing with a JWT",
      inGoodStanding({ id: "b1", type: "bot", jti: "j1", issuedAt: "2026-05-31T10:00:00.123Z" }, { claimed: "bot", composed: true }, "2026-06-01"),
    ],
    [
      "a human's standing, moderators only",
      inGoodStanding({ id: "u1", type: "human", jti: null, issuedAt: null }, { claimed: "human", moderator: true }, "2026-06-01"),
    ],
    ["the viewer's segment text", sql`SELECT ${segmentColumns({ id: "u1", type: "human" })} FROM segments s`],
    ["a hidden branch's rule", branchShown("b", { id: "u1", type: "admin" })],
    ["the anonymous segment text", shownContent("s", null)],
  ];

  it.each(cases)("%s", (_, query) => {
    expect(compileSimple(query)).toEqual(drizzleCompile(query));
  });

  it.each([
    ["a column", sql`SELECT ${segments.id} FROM segments`],
    ["a Drizzle operator (a column and an encoded parameter)", sql`SELECT 1 WHERE ${eq(segments.id, "s1")}`],
    ["an array parameter", sql`SELECT 1 WHERE id IN ${["a", "b"]}`],
    ["inlined parameters", sql`SELECT ${"a"}`.inlineParams()],
    ["a nested fragment with inlined parameters", sql`SELECT ${sql`${"a"}`.inlineParams()}`],
  ])("leaves %s to Drizzle", (_, query) => {
    expect(compileSimple(query)).toBeNull();
  });
});

describe("prepared: compiled once, bound per call, as the statement built with the values themselves", () => {
  const build = (p: { branchId: string; limit: number; author: string }) =>
    sql`SELECT ${"fixed"} FROM segments s WHERE s.branch_id = ${p.branchId} AND ${underLimits(limitValues(p.author, p.branchId, limits, NOW), true)} LIMIT ${p.limit}`;
  const statement = prepared(build);

  it.each([
    { branchId: "b1", limit: 10, author: "u1" },
    { branchId: "b2", limit: 0, author: "u'2" },
    { branchId: "", limit: 100, author: "" },
  ])("%o", (values) => {
    expect(compileSimple(statement(values))).toEqual(compileSimple(build(values)));
  });

  it("keeps one text for every call", () => {
    const a = compileSimple(statement({ branchId: "b1", limit: 1, author: "u1" }));
    const b = compileSimple(statement({ branchId: "b9", limit: 2, author: "u9" }));
    expect(a?.sql).toBe(b?.sql);
    expect(a?.params).not.toEqual(b?.params);
  });

  it("refuses a statement that is not plain text and values", () => {
    const columns = prepared((p: { id: string }) => sql`SELECT ${segments.id} FROM segments WHERE id = ${p.id}`);
    expect(() => columns({ id: "s1" })).toThrow(/plain SQL/);
  });

  it("leaves a placeholder outside a prepared statement to Drizzle", () => {
    expect(compileSimple(sql`SELECT ${sql.placeholder("x")}`)).toBeNull();
  });

  const shown = (p: { id: string }, viewer: Viewer) =>
    sql`SELECT ${shownContent("s", viewer)} FROM segments s WHERE s.id = ${p.id} AND ${branchShown("b", viewer)}`;
  const byViewer = preparedForViewer(shown);
  it.each<[string, Viewer]>([
    ["anonymous", null],
    ["an admin", { id: "a1", type: "admin" }],
    ["a human", { id: "u1", type: "human" }],
    ["a bot", { id: "b7", type: "bot" }],
  ])("per kind of viewer: %s", (_, viewer) => {
    expect(compileSimple(byViewer({ id: "s1" }, viewer))).toEqual(compileSimple(shown({ id: "s1" }, viewer)));
  });
});
