import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, registerAdmin, registerBot, registerHuman, storyWithSegments } from "./helpers";
import { get, post, shown } from "./pages";

/**
 * Reports and moderation on the web reader: the Report control on the pages, its form (Origin check,
 * session, limits, errors in words), and the /admin pages (404 to anyone but moderators, one-click actions).
 */

const alertOf = (html: string) =>
  /<div class="form-error" role="alert"[^>]*>([\s\S]*?)<\/div>/
    .exec(html)?.[1]
    .replace(/<[^>]*>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ")
    .trim();

const reportPath = (type: string, id: string, next: string) => `/report?${new URLSearchParams({ target_type: type, target_id: id, next })}`;
const reportsOn = (targetId: string) => env.DB.prepare("SELECT * FROM reports WHERE target_id = ?").bind(targetId).all<Record<string, string>>();

let w: Awaited<ReturnType<typeof storyWithSegments>> & { comment: { id: string }; bot: Awaited<ReturnType<typeof registerBot>> };
let moderator: Awaited<ReturnType<typeof registerHuman>>;
beforeAll(async () => {
  const scene = await storyWithSegments();
  const comment = (await call(`/branches/${scene.story.main_branch_id}/comments`, { token: scene.owner.token, body: { content: "a comment" } })).body.data;
  w = { ...scene, comment, bot: await registerBot() };
  moderator = await registerHuman();
  await env.DB.prepare("UPDATE users SET role = 'moderator' WHERE id = ?").bind(moderator.id).run();
});

describe("the Report control", () => {
  it("anonymous readers see a Report link on segments, comments, the branch, the story and a bot, which sends them to log in", async () => {
    const branch = await get(`/branches/${w.story.main_branch_id}`);
    const back = `/branches/${w.story.main_branch_id}`;
    for (const [type, id, next] of [
      ["segment", w.segments[1].id, `${back}#s-${w.segments[1].id}`],
      ["comment", w.comment.id, `${back}#c-${w.comment.id}`],
      ["branch", w.story.main_branch_id, back],
    ]) {
      expect(branch.text, type).toContain(`href="${reportPath(type, id, next).replace(/&/g, "&amp;")}"`);
    }
    expect((await get(`/stories/${w.story.id}`)).text).toContain(`href="${reportPath("story", w.story.id, `/stories/${w.story.id}`).replace(/&/g, "&amp;")}"`);
    expect((await get(`/bots/${w.bot.id}`)).text).toContain(`href="${reportPath("account", w.bot.id, `/bots/${w.bot.id}`).replace(/&/g, "&amp;")}"`);
    const form = await get(reportPath("segment", w.segments[1].id, back));
    expect(form.status).toBe(303);
    expect(form.location).toBe(`/login?next=${encodeURIComponent(reportPath("segment", w.segments[1].id, back))}`);
    // Posting without a session does the same and files nothing.
    const posted = await post(reportPath("story", w.story.id, "/"), { reason: "spam" });
    expect(posted.status).toBe(303);
    expect(posted.location).toMatch(/^\/login\?next=/);
  });

  it("signed in: a folded form on each; sending it files the report (303 to the thanks), a repeat updates it", async () => {
    const reader = await registerHuman();
    const branch = await get(`/branches/${w.story.main_branch_id}`, reader.token);
    expect(branch.text).toContain('aria-label="Report segment #2"');
    expect(branch.text).toContain('<option value="copyright">');
    const back = `/branches/${w.story.main_branch_id}#s-${w.segments[1].id}`;
    const path = reportPath("segment", w.segments[1].id, back);
    const sent = await post(path, { reason: "copyright", note: "from a book" }, { session: reader.token });
    expect(sent.status, sent.text.slice(0, 300)).toBe(303);
    expect(sent.location).toBe(`${path}&sent=1`);
    const thanks = await get(sent.location!, reader.token);
    expect(thanks.status).toBe(200);
    expect(thanks.text).toContain("Report sent");
    expect(thanks.text).toContain(`href="${back}"`);
    const again = await post(path, { reason: "spam", note: "" }, { session: reader.token });
    expect(again.status).toBe(303);
    const rows = (await reportsOn(w.segments[1].id)).results.filter((r) => r.reporter_id === reader.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ reason: "spam", note: null, status: "open", reporter_type: "human" });
  });

  it("errors come back on the report page in words: a bad reason or note (400), an unknown target (404), the limit (429)", async () => {
    const reader = await registerHuman();
    const path = reportPath("story", w.story.id, `/stories/${w.story.id}`);
    const bad = await post(path, { reason: "boring", note: "kept" }, { session: reader.token });
    expect(bad.status).toBe(400);
    expect(alertOf(bad.text)).toContain("Reason");
    expect(bad.text).toContain(">kept</textarea>");
    const control = await post(path, { reason: "spam", note: "esc\u001b[2J" }, { session: reader.token });
    expect(control.status).toBe(400);
    expect(alertOf(control.text)).toContain("Note");
    const unknown = await post(reportPath("comment", crypto.randomUUID(), "/"), { reason: "spam" }, { session: reader.token });
    expect(unknown.status).toBe(404);
    expect(alertOf(unknown.text)).toContain("not found");
    expect((await get(reportPath("rewrite", w.story.id, "/"), reader.token)).status).toBe(404);
    const limits = { LIMIT_REPORTS_PER_HOUR: "1" };
    expect((await post(path, { reason: "spam" }, { session: reader.token, env: limits })).status).toBe(303);
    const refused = await post(reportPath("branch", w.story.main_branch_id, "/"), { reason: "spam" }, { session: reader.token, env: limits });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(alertOf(refused.text)).toMatch(/limit|many/i);
  });

  it("a form sent from another site is refused (403) and files nothing; next cannot leave the site", async () => {
    const reader = await registerHuman();
    const res = await post(reportPath("story", w.story.id, "/"), { reason: "spam" }, { session: reader.token, origin: "https://attacker.example" });
    expect(res.status).toBe(403);
    expect((await reportsOn(w.story.id)).results.some((r) => r.reporter_id === reader.id)).toBe(false);
    const page = await get(reportPath("story", w.story.id, "//attacker.example/x"), reader.token);
    expect(shown(page)).toContain('name="reason"');
    expect(page.text).not.toContain("attacker.example");
  });
});

describe("the /admin pages", () => {
  it("404 to anonymous visitors and to humans who are not moderators; the queue and the audit log to moderators and admins", async () => {
    const human = await registerHuman();
    const admin = await registerAdmin();
    for (const path of ["/admin", "/admin/audit", "/admin?status=resolved"]) {
      for (const session of [undefined, human.token]) {
        const res = await get(path, session);
        expect(res.status, `${path} ${session ? "human" : "anonymous"}`).toBe(404);
        expect(res.text).toContain("Page not found");
      }
      expect((await get(path, moderator.token)).status, path).toBe(200);
      expect((await get(path, admin.token)).status, path).toBe(200);
    }
    // An unknown /admin path is the same 404 for everyone.
    expect((await get("/admin/nothing", moderator.token)).status).toBe(404);
    const open =
      (await reportsOn(w.story.id)).results[0] ??
      (await call("/reports", { token: human.token, body: { target_type: "story", target_id: w.story.id, reason: "spam" } })).body.data;
    const refused = await post(`/admin/reports/${open.id}/resolve`, { action: "dismiss" }, { session: human.token });
    expect(refused.status).toBe(404);
    expect((await env.DB.prepare("SELECT status FROM reports WHERE id = ?").bind(open.id).first<{ status: string }>())?.status).toBe("open");
  });

  it("a moderator sees the reported text and resolves with one click and a reason; the audit log shows it", async () => {
    const { story, segments } = await storyWithSegments();
    const reader = await registerHuman();
    const filed = (await call("/reports", { token: reader.token, body: { target_type: "segment", target_id: segments[2].id, reason: "abuse", note: "mean" } }))
      .body.data;
    const queue = await get("/admin?target_type=segment", moderator.token);
    expect(queue.text).toContain(`id="r-${filed.id}"`);
    expect(queue.text).toContain(segments[2].content);
    expect(queue.text).toContain("Reporter&#39;s note: mean");
    expect(queue.text).toContain(`href="/branches/${story.main_branch_id}#s-${segments[2].id}"`);
    for (const action of ["dismiss", "hide", "suspend"]) expect(queue.text).toContain(`name="action" value="${action}"`);

    const resolvePath = `/admin/reports/${filed.id}/resolve?next=${encodeURIComponent("/admin?target_type=segment")}`;
    const foreign = await post(resolvePath, { action: "hide", note: "x" }, { session: moderator.token, origin: "https://attacker.example" });
    expect(foreign.status).toBe(403);
    const res = await post(resolvePath, { action: "hide", note: "insults" }, { session: moderator.token });
    expect(res.status, res.text.slice(0, 300)).toBe(303);
    expect(res.location).toBe("/admin?target_type=segment");
    expect(await env.DB.prepare("SELECT status, resolution, resolution_note FROM reports WHERE id = ?").bind(filed.id).first()).toEqual({
      status: "resolved",
      resolution: "hide",
      resolution_note: "insults",
    });
    const hidden = await env.DB.prepare("SELECT hidden_by FROM segments WHERE id = ?").bind(segments[2].id).first<{ hidden_by: string }>();
    expect(hidden?.hidden_by).toBe(moderator.id);
    expect(shown(await get("/admin?target_type=segment", moderator.token))).not.toContain(`id="r-${filed.id}"`);
    const resolved = await get("/admin?status=resolved&target_type=segment", moderator.token);
    expect(resolved.text).toContain(`id="r-${filed.id}"`);

    // A second click on the same report: 409, in words, on the queue.
    const again = await post(resolvePath, { action: "dismiss" }, { session: moderator.token });
    expect(again.status).toBe(409);
    expect(alertOf(again.text)).toContain("already resolved");

    const log = await get("/admin/audit", moderator.token);
    expect(log.text).toContain("resolve_report (hide)");
    expect(log.text).toContain("insults");
    expect(log.text).toContain(`segment <code>${segments[2].id}</code>`);
  });

  it("a report whose comment was deleted stays actionable: no hide button, its author suspended with one click", async () => {
    const { story } = await storyWithSegments();
    const author = await registerHuman();
    const comment = (await call(`/branches/${story.main_branch_id}/comments`, { token: author.token, body: { content: "to be deleted" } })).body.data;
    const filed = (await call("/reports", { token: (await registerHuman()).token, body: { target_type: "comment", target_id: comment.id, reason: "abuse" } }))
      .body.data;
    expect((await call(`/comments/${comment.id}`, { method: "DELETE", token: author.token })).status).toBe(200);
    const queue = await get("/admin?target_type=comment", moderator.token);
    const item = queue.text.slice(queue.text.indexOf(`id="r-${filed.id}"`));
    expect(item.slice(0, item.indexOf("</article>"))).toContain("no longer exists");
    expect(item.slice(0, item.indexOf("</article>"))).not.toContain('value="hide"');
    const res = await post(`/admin/reports/${filed.id}/resolve?next=%2Fadmin`, { action: "suspend", note: "abuse" }, { session: moderator.token });
    expect(res.status, res.text.slice(0, 300)).toBe(303);
    expect((await env.DB.prepare("SELECT suspended_at FROM users WHERE id = ?").bind(author.id).first<{ suspended_at: string }>())?.suspended_at).toBeTruthy();
  });

  it("a moderator's own case: refused in words on the queue, the report left open", async () => {
    const filed = (await call("/reports", { token: (await registerHuman()).token, body: { target_type: "account", target_id: moderator.id, reason: "spam" } }))
      .body.data;
    const res = await post(`/admin/reports/${filed.id}/resolve?next=%2Fadmin`, { action: "dismiss" }, { session: moderator.token });
    expect(res.status).toBe(403);
    expect(alertOf(res.text)).toContain("You cannot resolve a report about yourself or your own content");
    expect((await env.DB.prepare("SELECT status FROM reports WHERE id = ?").bind(filed.id).first<{ status: string }>())?.status).toBe("open");
  });
});
