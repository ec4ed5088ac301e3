import { env, exports } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  BASE,
  call,
  createBranch,
  expectError,
  join,
  registerAdmin,
  registerBot,
  registerHuman,
  storyWithSegments,
  submit,
  unique,
  vote,
  withBindings,
  words,
} from "./helpers";
import { closeClients, hide, live, mcpTool, moderator, receiver, restore, waitFor } from "./moderation";
import { page, shown, trips } from "./pages";

/** Moderators hide and restore segments, comments, stories and branches. */

const TYPES = ["segments", "comments", "stories", "branches"] as const;

afterEach(async () => {
  vi.restoreAllMocks();
  await closeClients();
});

let mod: Awaited<ReturnType<typeof moderator>>;
let admin: Awaited<ReturnType<typeof registerAdmin>>;
beforeAll(async () => {
  mod = await moderator();
  admin = await registerAdmin();
});

/** A story whose owner wrote a segment and a comment carrying `secret`. */
async function world() {
  const secret = unique("zqx");
  const { owner, story, segments } = await storyWithSegments();
  const branchId = story.main_branch_id;
  const written = await submit(owner.token, branchId, `${secret} walked into the harbour at dawn`);
  expect(written.status, written.text).toBe(201);
  const comment = await call(`/branches/${branchId}/comments`, { token: owner.token, body: { content: `${secret} in a comment` } });
  expect(comment.status, comment.text).toBe(201);
  return { secret, owner, story, branchId, segments, segment: written.body.data, comment: comment.body.data };
}

describe("POST /admin/{type}/{id}/hide and …/restore", () => {
  it("refuses anonymous callers (401), humans and bots (403), on every route; moderators and admins may", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const id = crypto.randomUUID();
    for (const type of TYPES) {
      expectError(await hide(undefined, type, id), 401, "UNAUTHORIZED");
      expectError(await restore(undefined, type, id), 401, "UNAUTHORIZED");
      for (const who of [human, bot]) {
        expectError(await hide(who.token, type, id), 403, "FORBIDDEN");
        expectError(await restore(who.token, type, id), 403, "FORBIDDEN");
      }
      expectError(await hide(mod.token, type, id), 404, "NOT_FOUND");
      expectError(await restore(admin.token, type, id), 404, "NOT_FOUND");
      expectError(await hide(mod.token, type, "not-an-id"), 404, "NOT_FOUND");
    }
    const w = await world();
    expectError(await hide(human.token, "segments", w.segment.id), 403, "FORBIDDEN");
    expectError(await hide(w.owner.token, "segments", w.segment.id), 403, "FORBIDDEN");
    expect((await hide(admin.token, "segments", w.segment.id)).status).toBe(200);
    expect((await restore(mod.token, "segments", w.segment.id)).status).toBe(200);
  });

  it("needs a reason to hide (400); restoring takes an optional one", async () => {
    const w = await world();
    expectError(await call(`/admin/segments/${w.segment.id}/hide`, { token: mod.token, body: {} }), 400, "VALIDATION_ERROR");
    expectError(await call(`/admin/segments/${w.segment.id}/hide`, { token: mod.token, body: { reason: " " } }), 400, "VALIDATION_ERROR");
    expect((await hide(mod.token, "segments", w.segment.id)).status).toBe(200);
    const back = await call(`/admin/segments/${w.segment.id}/restore`, { token: mod.token, body: { reason: "appeal granted" } });
    expect(back.status, back.text).toBe(200);
  });

  it("hides once: a repeat is 200 with changed false and no second audit row; each action has its audit row", async () => {
    const w = await world();
    const first = await hide(mod.token, "segments", w.segment.id, "abuse");
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({ target_type: "segment", id: w.segment.id, hidden: true, hidden_by: mod.id, hidden_reason: "abuse", changed: true });
    const again = await hide(admin.token, "segments", w.segment.id, "spam");
    expect(again.body.data).toMatchObject({ hidden: true, hidden_by: mod.id, hidden_reason: "abuse", changed: false });
    const back = await restore(mod.token, "segments", w.segment.id);
    expect(back.body.data).toMatchObject({ hidden: false, hidden_at: null, changed: true });
    expect((await restore(mod.token, "segments", w.segment.id)).body.data.changed).toBe(false);
    const { results } = await env.DB.prepare("SELECT actor_id, action, target_type, reason FROM audit_log WHERE target_id = ? ORDER BY created_at")
      .bind(w.segment.id)
      .all();
    expect(results).toEqual([
      { actor_id: mod.id, action: "hide", target_type: "segment", reason: "abuse" },
      { actor_id: mod.id, action: "restore", target_type: "segment", reason: null },
    ]);
  });

  it("a hidden segment keeps its place and the sequence stays contiguous; replies keep their parent", async () => {
    const w = await world();
    const reply = await call(`/branches/${w.branchId}/comments`, { token: mod.token, body: { content: "a reply", parent_comment_id: w.comment.id } });
    await hide(mod.token, "segments", w.segment.id);
    await hide(mod.token, "comments", w.comment.id);
    const segs = (await call(`/branches/${w.branchId}/segments`)).body.data.segments;
    expect(segs.map((s: any) => s.sequence_order)).toEqual([1, 2, 3, 4, 5]);
    expect(segs[4]).toMatchObject({ id: w.segment.id, hidden: true, content: "", bot_id: w.owner.id });
    expect(segs[0].hidden).toBe(false);
    const comments = (await call(`/branches/${w.branchId}/comments`)).body.data.comments;
    expect(comments.find((c: any) => c.id === w.comment.id)).toMatchObject({ hidden: true, content: "" });
    expect(comments.find((c: any) => c.id === reply.body.data.id)).toMatchObject({ parent_comment_id: w.comment.id, content: "a reply" });
    // Its rewrites retell it: 404 with it, to anyone but its author and moderators.
    expectError(await call(`/segments/${w.segment.id}/rewrites`), 404, "NOT_FOUND");
    expect((await call(`/segments/${w.segment.id}/rewrites`, { token: w.owner.token })).status).toBe(200);
    expect((await call(`/segments/${w.segments[1].id}/rewrites`)).status).toBe(200);
    // The next segment still follows it.
    expect((await submit(w.owner.token, w.branchId, words(4))).body.data.sequence_order).toBe(6);
  });
});

describe("hidden text leaves every public read", () => {
  it("API, pages, MCP tools, the live stream (event, hello, replay) and a your_turn webhook: nowhere; restore brings it back", async () => {
    const w = await world();
    const { secret, story, branchId, owner } = w;
    // A summary made before the hide quotes it (the extractive summary takes the first sentences).
    expect((await call(`/branches/${branchId}/summary`, { token: owner.token, method: "POST" })).text).toContain(secret);
    const watching = await live(branchId);
    await waitFor(() => watching.frames.length >= 1 || undefined);
    const etag = (await call(`/branches/${branchId}/segments`)).headers.get("etag")!;
    // A cached read before the hide must not survive it.
    expect((await call(`/branches/${branchId}`)).text).toContain(secret);

    expect((await hide(mod.token, "segments", w.segment.id)).status).toBe(200);
    expect((await hide(mod.token, "comments", w.comment.id)).status).toBe(200);

    const hiddenEvent = await waitFor(() => watching.frames.find((f) => f.type === "hidden"));
    expect(hiddenEvent).toMatchObject({ target_type: "segment", id: w.segment.id, sequence_order: w.segment.sequence_order });
    watching.close();

    const apiReads = [
      `/branches/${branchId}`,
      `/branches/${branchId}/segments`,
      `/branches/${branchId}/comments`,
      `/branches/${branchId}/summary`,
      `/stories/${story.id}`,
      `/stories/${story.id}/branches`,
      `/stories/${story.id}/branches/tree`,
      "/stories",
      "/dashboard/stats",
      `/logs?story_id=${story.id}`,
    ];
    for (const path of apiReads) {
      const res = await call(path, { token: path.startsWith("/logs") ? mod.token : undefined });
      expect(res.status, path).toBe(200);
      expect(res.text, path).not.toContain(secret);
    }
    // Another signed-in reader sees the public view too.
    const other = await registerHuman();
    expect(shown(await call(`/branches/${branchId}/segments`, { token: other.token }))).not.toContain(secret);
    // The ETag changed with the body: no 304 confirms hidden text.
    const conditional = await call(`/branches/${branchId}/segments`, { headers: { "If-None-Match": etag } });
    expect(conditional.status).toBe(200);
    expect(conditional.headers.get("etag")).not.toBe(etag);

    for (const path of [`/stories/${story.id}`, `/branches/${branchId}`, `/users/${owner.id}`]) {
      const res = await page(path);
      expect(shown(res), path).not.toContain(secret);
      if (path !== `/users/${owner.id}`) expect(res.text, path).toContain("hidden by a moderator");
    }

    for (const [tool, args] of [
      ["read_branch", { branch_id: branchId }],
      ["get_story", { story_id: story.id }],
      ["list_stories", {}],
    ] as const) {
      const { json, result } = await mcpTool(tool, args);
      expect(result.isError ?? false, json).toBe(false);
      expect(json, tool).not.toContain(secret);
    }

    const replay = await live(branchId, "?after=0");
    await waitFor(() => replay.frames.length >= 6 || undefined);
    expect(replay.frames[0].type).toBe("hello");
    expect(replay.frames.find((f) => f.segment?.id === w.segment.id)?.segment).toMatchObject({ hidden: true, content: "" });
    expect(replay.raw.join("\n")).not.toContain(secret);
    replay.close();

    const received = receiver();
    const bot = await registerBot({ webhook_url: `https://receiver.test/${crypto.randomUUID()}` });
    expect((await join(bot.token, branchId)).status).toBe(201);
    const turn = await waitFor(() => received.find((r) => r.url === bot.webhook_url));
    const body = JSON.parse(turn.body);
    expect(body.event).toBe("your_turn");
    expect(body.context.previous_segments.find((s: any) => s.id === w.segment.id)).toMatchObject({ hidden: true, content: "" });
    expect(turn.body).not.toContain(secret);

    const summary = await call(`/branches/${branchId}/summary?force_refresh=true`, { token: owner.token });
    expect(shown(summary)).not.toContain(secret);

    // Restored: back everywhere, and the stream says so.
    const again = await live(branchId);
    await waitFor(() => again.frames.length >= 1 || undefined);
    expect((await restore(mod.token, "segments", w.segment.id)).status).toBe(200);
    expect((await restore(mod.token, "comments", w.comment.id)).status).toBe(200);
    const restored = await waitFor(() => again.frames.find((f) => f.type === "restored"));
    expect(restored.segment).toMatchObject({ id: w.segment.id, hidden: false, content: expect.stringContaining(secret) });
    again.close();
    expect((await call(`/branches/${branchId}/segments`)).text).toContain(secret);
    expect((await call(`/branches/${branchId}/comments`)).text).toContain(secret);
    expect((await page(`/branches/${branchId}`)).text).toContain(secret);
  });

  it("the author still sees their own hidden item, marked hidden; the cache never hands one viewer's rendering to another", async () => {
    const w = await world();
    const path = `/branches/${w.branchId}/segments`;
    const stranger = await registerHuman();
    await withBindings({ READ_CACHE_MS: "60000" }, async () => {
      expect((await call(path)).text).toContain(w.secret);
      expect((await call(path)).headers.get("x-read-cache")).toBe("hit");
      // The hide (a write through this isolate) empties the cache.
      await hide(mod.token, "segments", w.segment.id);
      // Anonymous first (stored), then the author, then anonymous again (a hit), then the author again (a hit of theirs).
      expect(shown(await call(path))).not.toContain(w.secret);
      const mine = await call(path, { token: w.owner.token });
      expect(mine.headers.get("x-read-cache")).toBeNull();
      expect(mine.body.data.segments.find((s: any) => s.id === w.segment.id)).toMatchObject({ hidden: true, content: expect.stringContaining(w.secret) });
      const anonymous = await call(path);
      expect(anonymous.headers.get("x-read-cache")).toBe("hit");
      expect(shown(anonymous)).not.toContain(w.secret);
      expect(shown(await call(path, { token: stranger.token }))).not.toContain(w.secret);
      const again = await call(path, { token: w.owner.token });
      expect(again.headers.get("x-read-cache")).toBe("hit");
      expect(again.text).toContain(w.secret);
    });
    expect((await call(path, { token: mod.token })).text).toContain(w.secret);
    expect((await call(`/branches/${w.branchId}`, { token: w.owner.token })).text).toContain(w.secret);
    expect((await call(`/branches/${w.branchId}/comments`, { token: w.owner.token })).status).toBe(200);
  });

  it("reads stay one round trip with hidden items, for anonymous readers, authors and moderators", async () => {
    const w = await world();
    await hide(mod.token, "segments", w.segment.id);
    await hide(mod.token, "comments", w.comment.id);
    const branch = await createBranch(w.owner.token, w.story.id, { initial_segment: words(4) });
    await hide(mod.token, "branches", branch.id);
    const reads = [
      `/stories/${w.story.id}`,
      `/stories/${w.story.id}/branches`,
      `/stories/${w.story.id}/branches/tree`,
      `/branches/${w.branchId}`,
      `/branches/${w.branchId}/segments`,
      `/branches/${w.branchId}/comments`,
      `/branches/${branch.id}`,
      `/branches/${w.branchId}/summary`,
      "/stories",
    ];
    for (const path of reads) {
      for (const token of [undefined, w.owner.token, mod.token]) {
        const res = await call(path, { token });
        expect(res.status, path).toBe(token || path !== `/branches/${branch.id}` ? 200 : 404);
        expect(trips(res), `${path} ${token ? "signed in" : "anonymous"}`).toBe(1);
      }
    }
  });
});

describe("votes on a hidden item", () => {
  it("stop counting toward the segment's score, the branch's vote_score and the author's reputation; restore counts them again", async () => {
    const w = await world();
    const bot = await registerBot();
    expect((await join(bot.token, w.branchId)).status).toBe(201);
    const written = await submit(bot.token, w.branchId, words(5, "botword"));
    expect(written.status, written.text).toBe(201);
    const seg = written.body.data.id;
    const voter = await registerHuman();
    expect((await vote(voter.token, "segment", seg, 1)).status).toBe(201);
    const reputation = async () => (await call(`/bots/${bot.id}/reputation`, { headers: { "x-d1-bookmark": "" } })).body.data.reputation;
    const branchScore = async () => (await call(`/branches/${w.branchId}`, { headers: { "x-d1-bookmark": "" } })).body.data.vote_score;
    expect(await reputation()).toBe(1);
    expect(await branchScore()).toBe(1);
    await hide(mod.token, "segments", seg);
    expect(await reputation()).toBe(0);
    expect(await branchScore()).toBe(0);
    expect((await call(`/segments/${seg}/votes/summary`)).body.data.total_score).toBe(0);
    const top = (await call("/dashboard/stats")).body.data.authors.top_upvoted;
    expect(top.find((a: any) => a.id === bot.id)?.vote_score ?? 0).toBe(0);
    await restore(mod.token, "segments", seg);
    expect(await reputation()).toBe(1);
    expect(await branchScore()).toBe(1);
  });
});

describe("hidden stories and branches", () => {
  it("a hidden story is unlisted and 404 to everyone but its owner and moderators, who see it hidden", async () => {
    const w = await world();
    expect((await hide(mod.token, "stories", w.story.id)).status).toBe(200);
    const stranger = await registerHuman();
    for (const path of [
      `/stories/${w.story.id}`,
      `/stories/${w.story.id}/pins`,
      `/stories/${w.story.id}/branches`,
      `/stories/${w.story.id}/branches/tree`,
      `/branches/${w.branchId}`,
      `/branches/${w.branchId}/segments`,
    ]) {
      expectError(await call(path), 404, "NOT_FOUND");
      expectError(await call(path, { token: stranger.token }), 404, "NOT_FOUND");
      expect((await call(path, { token: w.owner.token })).status, path).toBe(200);
      expect((await call(path, { token: mod.token })).status, path).toBe(200);
    }
    expect((await call(`/stories/${w.story.id}`, { token: w.owner.token })).body.data.hidden).toBe(true);
    const listed = (await call("/stories?limit=100", { token: w.owner.token })).body.data.stories.map((s: any) => s.id);
    expect(listed).not.toContain(w.story.id);
    const logs = await call(`/logs?story_id=${w.story.id}`, { token: mod.token });
    expect(logs.body.data.logs.length).toBeGreaterThan(0);
    expect(logs.text).not.toContain(w.story.title);
    expect((await page(`/stories/${w.story.id}`)).status).toBe(404);
    expect((await page(`/branches/${w.branchId}`)).status).toBe(404);
    const upgrade = await exports.default.fetch(new Request(`${BASE}/branches/${w.branchId}/live`, { headers: { Upgrade: "websocket" } }));
    expect(upgrade.status).toBe(404);
    const { result } = await mcpTool("get_story", { story_id: w.story.id });
    expect(result.isError).toBe(true);
    await restore(admin.token, "stories", w.story.id);
    expect((await call(`/stories/${w.story.id}`, { headers: { "x-d1-bookmark": "" } })).body.data.hidden).toBe(false);
  });

  it("a hidden branch leaves the lists and the tree and is 404 to others; its creator sees it; open streams get `hidden` and close", async () => {
    const w = await world();
    const creator = await registerHuman();
    const branch = await createBranch(creator.token, w.story.id, { initial_segment: words(4) });
    const watching = await live(branch.id);
    await waitFor(() => watching.frames.length >= 1 || undefined);
    expect((await hide(mod.token, "branches", branch.id)).status).toBe(200);
    const last = await waitFor(() => watching.frames.find((f) => f.type === "hidden"));
    expect(last).toMatchObject({ target_type: "branch", id: branch.id });
    expectError(await call(`/branches/${branch.id}`), 404, "NOT_FOUND");
    expectError(await call(`/branches/${branch.id}/comments`, { token: w.owner.token }), 404, "NOT_FOUND");
    const mine = await call(`/branches/${branch.id}`, { token: creator.token });
    expect(mine.body.data).toMatchObject({ id: branch.id, hidden: true });
    const ids = (await call(`/stories/${w.story.id}/branches?include_all=true`)).body.data.branches.map((b: any) => b.id);
    expect(ids).not.toContain(branch.id);
    expect(JSON.stringify((await call(`/stories/${w.story.id}/branches/tree`)).body.data)).not.toContain(branch.id);
    expect(shown(await page(`/stories/${w.story.id}`))).not.toContain(branch.id);
  });
});
