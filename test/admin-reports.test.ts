import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { apiTokenOf, call, createBranch, createStory, expectError, registerAdmin, registerBot, registerHuman, storyWithSegments, words } from "./helpers";

type Account = { id: string; token: string };

/** A human an admin made a moderator (set directly in D1, so these tests do not depend on the role route). */
async function registerModerator(): Promise<Account> {
  const human = await registerHuman();
  await env.DB.prepare("UPDATE users SET role = 'moderator' WHERE id = ?").bind(human.id).run();
  return human;
}

const report = (token: string, target_type: string, target_id: string, reason = "spam", note?: string) =>
  call("/reports", { token, body: { target_type, target_id, reason, note } });
const queue = (token: string | undefined, query = "") => call(`/admin/reports${query}`, { token });
const resolve = (token: string | undefined, id: string, body: Record<string, unknown>) => call(`/admin/reports/${id}/resolve`, { token, body });
const audit = (token: string | undefined, query = "") => call(`/admin/audit${query}`, { token });
const reportRow = (id: string) => env.DB.prepare("SELECT * FROM reports WHERE id = ?").bind(id).first<Record<string, unknown>>();

let moderator: Account;
let admin: Account;
beforeAll(async () => {
  moderator = await registerModerator();
  admin = await registerAdmin();
});

describe("who may use the admin routes", () => {
  it("anonymous 401; a human (JWT or API token) and a bot (JWT or API key) 403 FORBIDDEN; a moderator and an admin get through", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const { story } = await storyWithSegments();
    const filed = (await report(human.token, "story", story.id)).body.data;
    const routes = [
      { name: "GET /admin/reports", send: (t?: string) => queue(t), through: 200 },
      { name: "GET /admin/audit", send: (t?: string) => audit(t), through: 200 },
      // An unknown report: through the check, then 404.
      { name: "POST /admin/reports/{id}/resolve", send: (t?: string) => resolve(t, crypto.randomUUID(), { action: "dismiss" }), through: 404 },
    ];
    const refused = { "human JWT": human.token, "human API token": await apiTokenOf(human), "bot JWT": bot.token, "bot API key": bot.apiKey };
    for (const r of routes) {
      expectError(await r.send(), 401, "UNAUTHORIZED");
      for (const [kind, token] of Object.entries(refused)) {
        const res = await r.send(token);
        expect(res.body?.error?.code, `${r.name} as ${kind}`).toBe("FORBIDDEN");
        expectError(res, 403, "FORBIDDEN");
      }
      for (const [kind, token] of [
        ["moderator", moderator.token],
        ["admin", admin.token],
        ["moderator's API token", await apiTokenOf(moderator)],
      ]) {
        expect((await r.send(token)).status, `${r.name} as ${kind}`).toBe(r.through);
      }
    }
    // A human refused on resolve left the report as it was.
    expect((await reportRow(filed.id))?.status).toBe("open");
  });

  it("a demoted moderator is refused at once", async () => {
    const m = await registerModerator();
    expect((await queue(m.token)).status).toBe(200);
    await env.DB.prepare("UPDATE users SET role = 'user' WHERE id = ?").bind(m.id).run();
    expectError(await queue(m.token), 403, "FORBIDDEN");
  });
});

describe("GET /admin/reports", () => {
  it("lists open reports oldest first, each with the reported text and the count of distinct reporters of its target", async () => {
    const { owner, story, segments } = await storyWithSegments();
    const long = `${"Spam spam spam. ".repeat(20)}tail`;
    const seg = (await call(`/branches/${story.main_branch_id}/segments`, { token: owner.token, body: { content: words(3) } })).body.data;
    await env.DB.prepare("UPDATE segments SET content = ? WHERE id = ?").bind(long, seg.id).run();
    const [a, b, c] = [await registerHuman(), await registerHuman(), await registerBot()];
    const r1 = (await report(a.token, "segment", seg.id, "spam", "ads")).body.data;
    const r2 = (await report(b.token, "segment", seg.id, "abuse")).body.data;
    await report(a.token, "segment", seg.id, "copyright"); // a repeat: still one reporter more
    const r3 = (await report(c.token, "story", story.id, "copyright")).body.data;
    const r4 = (await report(c.token, "segment", segments[0].id, "other")).body.data;

    const res = await queue(moderator.token, "?limit=100");
    expect(res.status, res.text).toBe(200);
    const items: any[] = res.body.data.reports;
    const mine = items.filter((r) => [r1.id, r2.id, r3.id, r4.id].includes(r.id));
    expect(mine.map((r) => r.id)).toEqual([r1.id, r2.id, r3.id, r4.id]);
    const times = items.map((r) => r.created_at);
    expect([...times].sort()).toEqual(times);
    expect(items.every((r) => r.status === "open")).toBe(true);
    const first = mine[0];
    expect(first).toMatchObject({
      id: r1.id,
      status: "open",
      target_type: "segment",
      target_id: seg.id,
      reason: "copyright",
      note: null,
      reporter_id: a.id,
      reporter_type: "human",
      resolution: null,
      resolved_by: null,
      resolved_at: null,
      target_author_id: owner.id,
      target_page: `/branches/${story.main_branch_id}#s-${seg.id}`,
      reporters_count: 2,
    });
    expect(first.excerpt).toBe(`${long.slice(0, 200).trimEnd()}…`);
    expect(mine[1].reporters_count).toBe(2);
    expect(mine[2]).toMatchObject({ target_type: "story", reporter_type: "bot", target_page: `/stories/${story.id}`, reporters_count: 1 });
    expect(mine[2].excerpt).toBe(`${story.title}: ${story.background}`);
    expect(mine[3].excerpt).toBe(segments[0].content);
    expect(res.body.data.pagination).toMatchObject({ limit: 100, offset: 0, has_more: false });
    expect(res.body.data.pagination.total).toBeGreaterThanOrEqual(4);
  });

  it("filters by target_type and status, pages with limit and offset, and refuses a bad filter (400)", async () => {
    const bot = await registerBot();
    const [a, b] = [await registerHuman(), await registerHuman()];
    await report(a.token, "account", bot.id, "spam");
    await report(b.token, "account", bot.id, "abuse");
    const accounts = await queue(moderator.token, "?target_type=account&limit=100");
    expect(accounts.body.data.reports.length).toBeGreaterThanOrEqual(2);
    expect(accounts.body.data.reports.every((r: any) => r.target_type === "account")).toBe(true);
    const item = accounts.body.data.reports.find((r: any) => r.target_id === bot.id);
    expect(item).toMatchObject({ excerpt: bot.input.name, target_author_id: bot.id, target_page: `/bots/${bot.id}`, reporters_count: 2, target_gone: false });
    const page = await queue(moderator.token, "?target_type=account&limit=1&offset=1");
    expect(page.body.data.reports).toHaveLength(1);
    expect(page.body.data.reports[0].id).toBe(accounts.body.data.reports[1].id);
    expect(page.body.data.pagination).toMatchObject({ limit: 1, offset: 1, total: accounts.body.data.pagination.total });
    for (const bad of ["?status=closed", "?target_type=rewrite", "?limit=0"]) expectError(await queue(moderator.token, bad), 400, "VALIDATION_ERROR");
    // Resolved: newest resolved first, with how and by whom.
    await resolve(moderator.token, item.id, { action: "dismiss", note: "not spam" });
    const resolved = await queue(moderator.token, "?status=resolved&target_type=account");
    const first = resolved.body.data.reports[0];
    expect(first).toMatchObject({ target_id: bot.id, status: "resolved", resolution: "dismiss", resolved_by: moderator.id, resolution_note: "not spam" });
    const stamps = resolved.body.data.reports.map((r: any) => r.resolved_at);
    expect([...stamps].sort().reverse()).toEqual(stamps);
  });
});

describe("POST /admin/reports/{id}/resolve", () => {
  async function reported(kind: "segment" | "comment" = "segment") {
    const { owner, story, segments } = await storyWithSegments();
    const comment = (await call(`/branches/${story.main_branch_id}/comments`, { token: owner.token, body: { content: "rude" } })).body.data;
    const targetId = kind === "segment" ? segments[1].id : comment.id;
    const [a, b] = [await registerHuman(), await registerBot()];
    const first = (await report(a.token, kind, targetId, "spam")).body.data;
    const second = (await report(b.token, kind, targetId, "abuse")).body.data;
    return { owner, targetId, first, second };
  }

  it("dismiss: resolves the report and every other open one on the same target, in one batch with an audit entry", async () => {
    const { targetId, first, second } = await reported();
    const elsewhere = (await report((await registerHuman()).token, "story", (await storyWithSegments()).story.id)).body.data;
    const res = await resolve(moderator.token, first.id, { action: "dismiss", note: "  fine by the rules  " });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({
      id: first.id,
      status: "resolved",
      resolution: "dismiss",
      resolved_by: moderator.id,
      resolution_note: "fine by the rules",
      resolved_at: expect.stringMatching(/Z$/),
    });
    for (const id of [first.id, second.id]) {
      expect(await reportRow(id)).toMatchObject({ status: "resolved", resolution: "dismiss", resolved_by: moderator.id, resolution_note: "fine by the rules" });
    }
    expect((await reportRow(elsewhere.id))?.status).toBe("open");
    const log = await audit(moderator.token, `?target_type=report&target_id=${first.id}`);
    expect(log.body.data.entries).toEqual([
      {
        id: expect.any(String),
        actor_id: moderator.id,
        actor_name: expect.any(String),
        action: "resolve_report",
        target_type: "report",
        target_id: first.id,
        reason: "fine by the rules",
        detail: { resolution: "dismiss", target_type: "segment", target_id: targetId, reason: "spam" },
        created_at: res.body.data.resolved_at,
      },
    ]);
  });

  it("409 CONFLICT for a resolved report (itself, or resolved with another), 404 for an unknown one, 400 for a bad action or note", async () => {
    const { first, second } = await reported();
    expect((await resolve(admin.token, first.id, { action: "dismiss" })).status).toBe(200);
    const err = expectError(await resolve(admin.token, first.id, { action: "dismiss" }), 409, "CONFLICT");
    expect(err.details).toMatchObject({ resolution: "dismiss" });
    expectError(await resolve(admin.token, second.id, { action: "hide" }), 409, "CONFLICT");
    expectError(await resolve(admin.token, crypto.randomUUID(), { action: "dismiss" }), 404, "NOT_FOUND");
    expectError(await resolve(admin.token, "not-an-id", { action: "dismiss" }), 404, "NOT_FOUND");
    const open = (await report((await registerHuman()).token, "story", (await storyWithSegments()).story.id)).body.data;
    for (const body of [{}, { action: "delete" }, { action: "dismiss", note: "x".repeat(1001) }, { action: "dismiss", note: "bell\u0007" }]) {
      expectError(await resolve(admin.token, open.id, body), 400, "VALIDATION_ERROR");
    }
    expect((await reportRow(open.id))?.status).toBe("open");
  });

  it("two moderators resolving at once: one acts, the other gets 409 and writes nothing (the same report, or two on one target)", async () => {
    const other = await registerModerator();
    for (const pick of [(r: any) => [r.first, r.first], (r: any) => [r.first, r.second]]) {
      const r = await reported("comment");
      const [a, b] = pick(r);
      const answers = await Promise.all([
        resolve(moderator.token, a.id, { action: "hide", note: "first" }),
        resolve(other.token, b.id, { action: "dismiss", note: "second" }),
      ]);
      expect(answers.map((x) => x.status).sort()).toEqual([200, 409]);
      const won = answers.find((x) => x.status === 200)!.body.data.resolution;
      expect(answers.find((x) => x.status === 409)!.body.error.details).toMatchObject({ resolution: won });
      const rows = await env.DB.prepare("SELECT resolution FROM reports WHERE id IN (?, ?)").bind(r.first.id, r.second.id).all<{ resolution: string }>();
      expect(rows.results.map((x) => x.resolution)).toEqual([won, won]);
      const logged = await env.DB.prepare("SELECT count(*) AS n FROM audit_log WHERE action = 'resolve_report' AND target_id IN (?, ?)")
        .bind(r.first.id, r.second.id)
        .first<{ n: number }>();
      expect(logged?.n).toBe(1);
      const hidden = await env.DB.prepare("SELECT hidden_at FROM comments WHERE id = ?").bind(r.targetId).first<{ hidden_at: string | null }>();
      expect(hidden?.hidden_at !== null).toBe(won === "hide");
    }
  });

  it("hide: hides the reported item and resolves its reports, with both audit entries; an account cannot be hidden (400)", async () => {
    const { targetId, first, second } = await reported("comment");
    const res = await resolve(moderator.token, second.id, { action: "hide", note: "harassment" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ status: "resolved", resolution: "hide" });
    const row = await env.DB.prepare("SELECT hidden_at, hidden_by FROM comments WHERE id = ?").bind(targetId).first<Record<string, string>>();
    expect(row?.hidden_at).toBeTruthy();
    expect(row?.hidden_by).toBe(moderator.id);
    expect((await reportRow(first.id))?.resolution).toBe("hide");
    const actions = (await audit(moderator.token, `?actor_id=${moderator.id}&limit=10`)).body.data.entries.map((e: any) => `${e.action} ${e.target_type}`);
    expect(actions).toEqual(expect.arrayContaining(["hide comment", "resolve_report report"]));

    const bot = await registerBot();
    const onAccount = (await report((await registerHuman()).token, "account", bot.id)).body.data;
    const err = expectError(await resolve(moderator.token, onAccount.id, { action: "hide" }), 400, "VALIDATION_ERROR");
    expect(err.details.fields[0].field).toBe("action");
    expect((await reportRow(onAccount.id))?.status).toBe("open");
  });

  it("suspend: suspends the content's author (or the reported account) and resolves the reports", async () => {
    const { owner, first } = await reported();
    const res = await resolve(admin.token, first.id, { action: "suspend" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.resolution).toBe("suspend");
    const user = await env.DB.prepare("SELECT suspended_at, suspension_reason FROM users WHERE id = ?").bind(owner.id).first<Record<string, string>>();
    expect(user?.suspended_at).toBeTruthy();
    expect(user?.suspension_reason).toBe("Reported for spam");
    const entries = (await audit(admin.token, `?target_type=account&target_id=${owner.id}`)).body.data.entries;
    expect(entries.map((e: any) => e.action)).toContain("suspend");

    const bot = await registerBot();
    const onBot = (await report((await registerHuman()).token, "account", bot.id, "abuse")).body.data;
    expect((await resolve(moderator.token, onBot.id, { action: "suspend", note: "flooding" })).status).toBe(200);
    const row = await env.DB.prepare("SELECT suspended_at, suspension_reason FROM bots WHERE id = ?").bind(bot.id).first<Record<string, string>>();
    expect(row).toMatchObject({ suspension_reason: "flooding" });
  });
});

describe("GET /admin/audit", () => {
  it("newest first, filtered by actor, action and target, paginated; the log refuses UPDATE and DELETE", async () => {
    const m = await registerModerator();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { story } = await storyWithSegments();
      const r = (await report((await registerHuman()).token, "story", story.id, "other", `r${i}`)).body.data;
      expect((await resolve(m.token, r.id, { action: "dismiss", note: `n${i}` })).status).toBe(200);
      ids.push(r.id);
    }
    const mine = await audit(m.token, `?actor_id=${m.id}`);
    expect(mine.status).toBe(200);
    expect(mine.body.data.entries.map((e: any) => e.target_id)).toEqual([...ids].reverse());
    expect(mine.body.data.entries.map((e: any) => e.reason)).toEqual(["n2", "n1", "n0"]);
    expect(mine.body.data.pagination).toEqual({ limit: 50, offset: 0, total: 3, has_more: false });
    const paged = await audit(m.token, `?actor_id=${m.id}&action=resolve_report&limit=2&offset=1`);
    expect(paged.body.data.entries.map((e: any) => e.target_id)).toEqual([ids[1], ids[0]]);
    expect((await audit(m.token, `?actor_id=${m.id}&action=hide`)).body.data.entries).toEqual([]);
    for (const bad of ["?action=delete", "?target_type=rewrite", "?offset=-1"]) expectError(await audit(m.token, bad), 400, "VALIDATION_ERROR");

    await expect(env.DB.prepare("UPDATE audit_log SET reason = 'changed' WHERE actor_id = ?").bind(m.id).run()).rejects.toThrow(/append-only/);
    await expect(env.DB.prepare("DELETE FROM audit_log WHERE actor_id = ?").bind(m.id).run()).rejects.toThrow(/append-only/);
  });
});

describe("moderators and their own cases", () => {
  const hide = (token: string, plural: string, id: string) => call(`/admin/${plural}/${id}/hide`, { token, body: { reason: "spam" } });
  const unhide = (token: string, plural: string, id: string) => call(`/admin/${plural}/${id}/restore`, { token, body: {} });
  const hiddenAt = (table: string, id: string) => env.DB.prepare(`SELECT hidden_at FROM ${table} WHERE id = ?`).bind(id).first<{ hidden_at: string | null }>();
  const audited = (id: string) => env.DB.prepare("SELECT count(*) AS n FROM audit_log WHERE target_id = ?").bind(id).first<{ n: number }>();

  /** What the account wrote: a segment, a comment and a branch in another's story, and a story of its own. */
  async function contentOf(author: Account) {
    const { story, segments } = await storyWithSegments();
    const own = await createStory(author.token);
    const segment = (await call(`/branches/${story.main_branch_id}/segments`, { token: author.token, body: { content: words(3) } })).body.data;
    const comment = (await call(`/branches/${story.main_branch_id}/comments`, { token: author.token, body: { content: "mine" } })).body.data;
    const branch = await createBranch(author.token, story.id, { fork_at_segment_id: segments[1].id });
    return [
      ["segments", segment.id],
      ["comments", comment.id],
      ["branches", branch.id],
      ["stories", own.id],
    ] as const;
  }

  it("a moderator (and an admin) may not hide or restore their own content: 403 PERMISSION_DENIED, nothing written; another may", async () => {
    const other = await registerModerator();
    for (const self of [await registerModerator(), admin]) {
      for (const [plural, id] of await contentOf(self)) {
        const err = expectError(await hide(self.token, plural, id), 403, "PERMISSION_DENIED");
        expect(err.message).toMatch(/your own/);
        expect((await hiddenAt(plural, id))?.hidden_at).toBeNull();
        expect((await hide(other.token, plural, id)).status).toBe(200);
        expectError(await unhide(self.token, plural, id), 403, "PERMISSION_DENIED");
        expect((await hiddenAt(plural, id))?.hidden_at).not.toBeNull();
        expect((await audited(id))?.n).toBe(1); // the other moderator's hide alone
      }
    }
  });

  it("nor resolve a report about themselves or their content, whatever the action: 403 PERMISSION_DENIED, the report left open", async () => {
    const [self, other] = [await registerModerator(), await registerModerator()];
    const reporter = await registerHuman();
    const [[, segmentId], [, commentId]] = await contentOf(self);
    const reports = [
      (await report(reporter.token, "account", self.id)).body.data,
      (await report(reporter.token, "segment", segmentId)).body.data,
      (await report(reporter.token, "comment", commentId)).body.data,
    ];
    for (const r of reports) {
      for (const action of ["dismiss", "hide", "suspend"]) {
        const err = expectError(await resolve(self.token, r.id, { action }), 403, "PERMISSION_DENIED");
        expect(err.message, `${r.target_type} ${action}`).toMatch(/about yourself or your own content/);
      }
      expect((await reportRow(r.id))?.status).toBe("open");
      expect((await resolve(other.token, r.id, { action: "dismiss" })).status).toBe(200);
    }
    // An admin is held to the same rule.
    const onAdmin = (await report(reporter.token, "account", admin.id)).body.data;
    expectError(await resolve(admin.token, onAdmin.id, { action: "dismiss" }), 403, "PERMISSION_DENIED");
  });
});

describe("reports outlive what they report", () => {
  it("a deleted comment's reports keep its author: the queue names them, suspend acts on them, hide is 409 CONFLICT", async () => {
    const { story } = await storyWithSegments();
    const author = await registerHuman();
    const comment = async () => (await call(`/branches/${story.main_branch_id}/comments`, { token: author.token, body: { content: "rude" } })).body.data;
    const [first, second] = [await comment(), await comment()];
    const reporter = await registerHuman();
    const onFirst = (await report(reporter.token, "comment", first.id, "abuse")).body.data;
    const onSecond = (await report(reporter.token, "comment", second.id, "abuse")).body.data;
    for (const c of [first, second]) expect((await call(`/comments/${c.id}`, { method: "DELETE", token: author.token })).status).toBe(200);

    const queued = (await queue(moderator.token, "?target_type=comment&limit=100")).body.data.reports.find((r: any) => r.id === onFirst.id);
    expect(queued).toMatchObject({ target_id: first.id, target_author_id: author.id, excerpt: null, target_gone: true });
    const err = expectError(await resolve(moderator.token, onSecond.id, { action: "hide" }), 409, "CONFLICT");
    expect(err.message).toMatch(/no longer exists/);
    expect((await reportRow(onSecond.id))?.status).toBe("open");

    const res = await resolve(moderator.token, onFirst.id, { action: "suspend", note: "harassment" });
    expect(res.status, res.text).toBe(200);
    const user = await env.DB.prepare("SELECT suspended_at, suspension_reason FROM users WHERE id = ?").bind(author.id).first<Record<string, string>>();
    expect(user).toMatchObject({ suspension_reason: "harassment" });
    expect(user?.suspended_at).toBeTruthy();
    expect((await resolve(moderator.token, onSecond.id, { action: "dismiss" })).status).toBe(200);
  });

  it("migration 0013 gives reports filed before it the author their target has (none for a target already gone)", async () => {
    const { owner, story, segments } = await storyWithSegments();
    const bot = await registerBot();
    const reporter = await registerHuman();
    const kept = [
      (await report(reporter.token, "segment", segments[1].id)).body.data,
      (await report(reporter.token, "story", story.id)).body.data,
      (await report(reporter.token, "account", bot.id)).body.data,
    ];
    const gone = (await report(reporter.token, "account", (await registerBot()).id)).body.data;
    // As they were before the migration: no author kept; then the one account is gone.
    const ids = [...kept, gone].map((r) => r.id);
    await env.DB.prepare(`UPDATE reports SET target_author_id = NULL WHERE id IN (${ids.map(() => "?").join(", ")})`)
      .bind(...ids)
      .run();
    await env.DB.prepare("DELETE FROM bots WHERE id = (SELECT target_id FROM reports WHERE id = ?)").bind(gone.id).run();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0013_reports_target_author"))!;
    const backfill = migration.queries.find((q) => q.includes("UPDATE"))!;
    await env.DB.prepare(backfill).run();
    const authors = await Promise.all(ids.map(async (id) => (await reportRow(id))?.target_author_id));
    expect(authors).toEqual([owner.id, owner.id, bot.id, null]);
  });
});

describe("a moderator's reason refuses control and format characters, as names do", () => {
  it("hide, restore, suspend, restore an account, the role and a report's resolution: 400 naming the field", async () => {
    const { story, segments } = await storyWithSegments();
    const target = await registerHuman();
    const open = (await report((await registerHuman()).token, "story", story.id)).body.data;
    for (const bad of ["flip\u202Eit", "zero\u200Bwidth", "bell\u0007"]) {
      const sends: [string, () => Promise<any>, string][] = [
        ["hide", () => call(`/admin/segments/${segments[1].id}/hide`, { token: moderator.token, body: { reason: bad } }), "reason"],
        ["restore", () => call(`/admin/segments/${segments[1].id}/restore`, { token: moderator.token, body: { reason: bad } }), "reason"],
        ["suspend", () => call(`/admin/accounts/${target.id}/suspend`, { token: moderator.token, body: { reason: bad } }), "reason"],
        ["unsuspend", () => call(`/admin/accounts/${target.id}/restore`, { token: moderator.token, body: { reason: bad } }), "reason"],
        ["role", () => call(`/admin/accounts/${target.id}/role`, { token: admin.token, body: { role: "moderator", reason: bad } }), "reason"],
        ["resolve", () => resolve(moderator.token, open.id, { action: "dismiss", note: bad }), "note"],
      ];
      for (const [name, send, field] of sends) {
        const err = expectError(await send(), 400, "VALIDATION_ERROR");
        expect(
          err.details.fields.map((f: any) => f.field),
          `${name} ${JSON.stringify(bad)}`,
        ).toContain(field);
      }
    }
    // Line breaks and tabs are text.
    expect((await call(`/admin/accounts/${target.id}/suspend`, { token: moderator.token, body: { reason: "line one\nline\ttwo" } })).status).toBe(200);
    expect((await resolve(moderator.token, open.id, { action: "dismiss", note: "line one\r\nline two" })).status).toBe(200);
    expect((await env.DB.prepare("SELECT suspended_at FROM users WHERE id = ?").bind(target.id).first<any>())?.suspended_at).toBeTruthy();
    expect(await env.DB.prepare("SELECT role FROM users WHERE id = ?").bind(target.id).first()).toEqual({ role: "user" });
  });
});
