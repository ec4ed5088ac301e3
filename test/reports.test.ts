import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createBranch, expectError, registerAdmin, registerBot, registerHuman, storyWithSegments } from "./helpers";

/** Something of every kind to report: a story with its segments, a branch, a comment, a bot and a human. */
let w: { reporter: Awaited<ReturnType<typeof registerHuman>>; targets: Record<string, string> };

beforeAll(async () => {
  const { owner, story, segments } = await storyWithSegments();
  const branch = await createBranch(owner.token, story.id);
  const comment = (await call(`/branches/${story.main_branch_id}/comments`, { token: owner.token, body: { content: "buy cheap pills" } })).body.data;
  const bot = await registerBot();
  w = {
    reporter: await registerHuman(),
    targets: { segment: segments[1].id, comment: comment.id, story: story.id, branch: branch.id, account: bot.id, "account (a human)": owner.id },
  };
});

const report = (token: string | undefined, body: Record<string, unknown>, extra: Parameters<typeof call>[1] = {}) =>
  call("/reports", { token, body, ...extra });

describe("POST /reports", () => {
  it("files a report on each kind of target: 201 with the report", async () => {
    for (const [kind, id] of Object.entries(w.targets)) {
      const target_type = kind.startsWith("account") ? "account" : kind;
      const res = await report(w.reporter.token, { target_type, target_id: id, reason: "spam", note: `about this ${kind}` });
      expect(res.status, `${kind}: ${res.text}`).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.any(String),
        status: "open",
        target_type,
        target_id: id,
        reason: "spam",
        note: `about this ${kind}`,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
    }
  });

  it("a repeat by the same reporter on the same open report updates it: 200, same id, new reason and note", async () => {
    const me = await registerHuman();
    const target = { target_type: "segment", target_id: w.targets.segment };
    const first = await report(me.token, { ...target, reason: "spam", note: "first" });
    expect(first.status).toBe(201);
    const again = await report(me.token, { ...target, reason: "copyright" });
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toMatchObject({ id: first.body.data.id, reason: "copyright", note: null, created_at: first.body.data.created_at });
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM reports WHERE reporter_id = ? AND target_id = ?")
      .bind(me.id, w.targets.segment)
      .first<{ n: number }>())!;
    expect(n).toBe(1);
    // Another reporter's report on the same target is its own.
    const other = await report((await registerHuman()).token, { ...target, reason: "spam" });
    expect(other.status).toBe(201);
    expect(other.body.data.id).not.toBe(first.body.data.id);
  });

  it("once resolved, reporting the same target again opens a new report", async () => {
    const me = await registerHuman();
    const target = { target_type: "comment", target_id: w.targets.comment, reason: "abuse" };
    const first = await report(me.token, target);
    await env.DB.prepare("UPDATE reports SET status = 'resolved', resolution = 'dismiss' WHERE id = ?").bind(first.body.data.id).run();
    const second = await report(me.token, target);
    expect(second.status).toBe(201);
    expect(second.body.data.id).not.toBe(first.body.data.id);
  });

  it("bots and admins report too; ids are matched in any letter case", async () => {
    const bot = await registerBot();
    const res = await report(bot.token, { target_type: "story", target_id: w.targets.story.toUpperCase(), reason: "other" });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.target_id).toBe(w.targets.story);
    const row = await env.DB.prepare("SELECT reporter_type FROM reports WHERE id = ?").bind(res.body.data.id).first<{ reporter_type: string }>();
    expect(row?.reporter_type).toBe("bot");
    const admin = await registerAdmin();
    expect((await report(admin.token, { target_type: "branch", target_id: w.targets.branch, reason: "abuse" })).status).toBe(201);
    // An admin account (its id is not a UUID) can be reported too.
    expect((await report(bot.token, { target_type: "account", target_id: admin.id, reason: "abuse" })).status).toBe(201);
  });

  it("401 UNAUTHORIZED without a credential", async () => {
    expectError(await report(undefined, { target_type: "segment", target_id: w.targets.segment, reason: "spam" }), 401, "UNAUTHORIZED");
  });

  it("404 NOT_FOUND for a target that does not exist, of every kind (and for an id that is no id)", async () => {
    for (const target_type of ["segment", "comment", "story", "branch", "account"]) {
      expectError(await report(w.reporter.token, { target_type, target_id: crypto.randomUUID(), reason: "spam" }), 404, "NOT_FOUND");
    }
    expectError(await report(w.reporter.token, { target_type: "segment", target_id: "not-an-id", reason: "spam" }), 404, "NOT_FOUND");
    // A real id of another kind is not the target either.
    expectError(await report(w.reporter.token, { target_type: "comment", target_id: w.targets.segment, reason: "spam" }), 404, "NOT_FOUND");
  });

  it("400 VALIDATION_ERROR naming the field: reason, target_type, a note over 1,000 characters or with control or format characters", async () => {
    const base = { target_type: "segment", target_id: w.targets.segment, reason: "spam" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, reason: "boring" }, "reason"],
      [{ ...base, reason: undefined }, "reason"],
      [{ ...base, target_type: "rewrite" }, "target_type"],
      [{ ...base, target_id: "" }, "target_id"],
      [{ ...base, note: "x".repeat(1001) }, "note"],
      [{ ...base, note: "clear\u001b[2Jscreen" }, "note"],
      [{ ...base, note: "nul\u0000" }, "note"],
      // Format characters too, as in names: a bidi override reverses what a moderator reads; zero-width hides text.
      [{ ...base, note: "gnp.\u202Eexe" }, "note"],
      [{ ...base, note: "zero\u200Bwidth" }, "note"],
    ];
    for (const [body, field] of cases) {
      const err = expectError(await report(w.reporter.token, body), 400, "VALIDATION_ERROR");
      expect(
        err.details.fields.map((f: { field: string }) => f.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    // Tabs and line breaks (as a browser sends them) are text.
    expect((await report((await registerHuman()).token, { ...base, note: "line one\r\nline\ttwo" })).status).toBe(201);
  });

  it("is limited per account per hour (LIMIT_REPORTS_PER_HOUR): X-RateLimit-* on each, then 429 RATE_LIMIT_EXCEEDED", async () => {
    const me = await registerHuman();
    const limits = { env: { LIMIT_REPORTS_PER_HOUR: "2" } };
    const targets = [w.targets.segment, w.targets.story, w.targets.branch];
    const types = ["segment", "story", "branch"];
    for (let i = 0; i < 2; i++) {
      const res = await report(me.token, { target_type: types[i], target_id: targets[i], reason: "spam" }, limits);
      expect(res.status, res.text).toBe(201);
      expect(res.headers.get("x-ratelimit-limit")).toBe("2");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(1 - i));
      expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    }
    const refused = await report(me.token, { target_type: "branch", target_id: w.targets.branch, reason: "spam" }, limits);
    const err = expectError(refused, 429, "RATE_LIMIT_EXCEEDED");
    expect(err.details).toEqual({ limit: "2 per hour", retry_after: expect.any(Number), reset_time: expect.stringMatching(/Z$/) });
    expect(refused.headers.get("retry-after")).toBe(String(err.details.retry_after));
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM reports WHERE reporter_id = ?").bind(me.id).first<{ n: number }>())!;
    expect(n).toBe(2);
    // A refused report (404) counts nothing.
    const other = await registerHuman();
    expectError(await report(other.token, { target_type: "story", target_id: crypto.randomUUID(), reason: "spam" }, limits), 404, "NOT_FOUND");
    const ok = await report(other.token, { target_type: "story", target_id: w.targets.story, reason: "spam" }, limits);
    expect(ok.headers.get("x-ratelimit-remaining")).toBe("1");
  });

  it("Idempotency-Key: a repeat replays the first answer (201) without writing; another body is 422", async () => {
    const me = await registerHuman();
    const key = crypto.randomUUID();
    const body = { target_type: "account", target_id: w.targets["account (a human)"], reason: "abuse" };
    const first = await report(me.token, body, { headers: { "Idempotency-Key": key } });
    expect(first.status).toBe(201);
    const again = await report(me.token, body, { headers: { "Idempotency-Key": key } });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expectError(await report(me.token, { ...body, reason: "spam" }, { headers: { "Idempotency-Key": key } }), 422, "IDEMPOTENCY_KEY_REUSED");
    // A second key on the same open report answers 200 (the update), and replays 200.
    const key2 = crypto.randomUUID();
    const update = await report(me.token, { ...body, reason: "other" }, { headers: { "Idempotency-Key": key2 } });
    expect(update.status).toBe(200);
    const replay = await report(me.token, { ...body, reason: "other" }, { headers: { "Idempotency-Key": key2 } });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(update.body);
  });
});
