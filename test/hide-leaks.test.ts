import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { WebhookMessage } from "../src/domain/events/webhook-events";
import { handleQueue } from "../src/queue/webhooks";
import { branchRoom, call, createBranch, expectError, join, registerBot, registerHuman, storyWithSegments, submit, unique, vote, words } from "./helpers";
import { closeClients, hide, live, mcpClient, mcpTool, moderator, receiver, restore, waitFor } from "./moderation";
import { page, shown } from "./pages";

/** Hidden means hidden, on every door — forks, summaries, writes and webhooks. */

let mod: Awaited<ReturnType<typeof moderator>>;
beforeAll(async () => {
  mod = await moderator();
});

afterEach(async () => {
  vi.restoreAllMocks();
  await closeClients();
});

const count = async (sql: string, ...params: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;

/**
 * A story with a branch B (by X, then continued by Z, each writing a secret) and a fork C of B made by W before any
 * hide: C's reading path is the main line, B's two segments, then C's own.
 */
async function forkedWorld() {
  const [secretX, secretZ] = [unique("zqx"), unique("zqz")];
  const { owner, story } = await storyWithSegments();
  const [x, z, w] = [await registerHuman(), await registerHuman(), await registerHuman()];
  const b = await createBranch(x.token, story.id, { initial_segment: `${secretX} rose from the water at dawn` });
  const zs = await submit(z.token, b.id, `${secretZ} followed the stranger ashore`);
  expect(zs.status, zs.text).toBe(201);
  const c = await createBranch(w.token, story.id, { parent_branch_id: b.id, initial_segment: words(4, "forkword") });
  return { owner, story, x, z, w, b, c, secretX, secretZ };
}

/** The segments of a reading path that lie on branch `branchId`. */
const on = (path: any[], branchId: string) => path.filter((s) => s.branch_id === branchId);

describe("forks and hidden content", () => {
  it("forking from a hidden branch, a hidden segment, a segment of a hidden branch, a fork of a hidden branch or a hidden story is 404 (REST, MCP), for moderators too; nothing is written", async () => {
    const f = await forkedWorld();
    const { story, b, c } = f;
    const bFirst = b.segment.id as string;
    const mainSegs = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments;
    expect((await hide(mod.token, "segments", mainSegs[2].id)).status).toBe(200);
    expect((await hide(mod.token, "branches", b.id)).status).toBe(200);
    const before = await count("SELECT count(*) AS n FROM branches WHERE story_id = ?", story.id);
    const forker = await registerHuman();
    for (const who of [forker, f.x, mod]) {
      for (const body of [
        { parent_branch_id: b.id },
        { fork_at_segment_id: bFirst },
        { fork_at_segment_id: mainSegs[2].id },
        { parent_branch_id: c.id },
        { parent_branch_id: c.id, fork_at_segment_id: c.segment.id },
      ]) {
        const res = await call(`/stories/${story.id}/branches`, { token: who.token, body: { title: "a way through", initial_segment: words(4), ...body } });
        expectError(res, 404, "NOT_FOUND");
      }
    }
    const { result } = await mcpTool("create_branch", { story_id: story.id, title: "a way through", parent_branch_id: b.id }, forker.token);
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error.code).toBe("NOT_FOUND");
    expect(await count("SELECT count(*) AS n FROM branches WHERE story_id = ?", story.id)).toBe(before);
    // A visible segment of the main line still forks.
    expect((await call(`/stories/${story.id}/branches`, { token: forker.token, body: { title: "fine", fork_at_segment_id: mainSegs[1].id } })).status).toBe(
      201,
    );

    const hiddenStory = await storyWithSegments();
    expect((await hide(mod.token, "stories", hiddenStory.story.id)).status).toBe(200);
    for (const who of [hiddenStory.owner, forker, mod]) {
      expectError(await call(`/stories/${hiddenStory.story.id}/branches`, { token: who.token, body: { title: "out" } }), 404, "NOT_FOUND");
    }
    expect(await count("SELECT count(*) AS n FROM branches WHERE story_id = ?", hiddenStory.story.id)).toBe(1);
  });

  it("a fork made before the hide masks the hidden branch's segments on every door, except to their authors and moderators; restore brings them back", async () => {
    const f = await forkedWorld();
    const { b, c, secretX, secretZ } = f;
    const leaks = (text: string) => text.includes(secretX) || text.includes(secretZ);
    expect(leaks((await page(`/branches/${c.id}`)).text)).toBe(true);
    // A summary made before the hide quotes the hidden branch's text (the extractive summary of C's path).
    expect(leaks((await call(`/branches/${c.id}/summary`, { token: f.w.token, method: "POST" })).text)).toBe(true);
    const received = receiver();
    const bot = await registerBot({ webhook_url: `https://receiver.test/${crypto.randomUUID()}` });

    expect((await hide(mod.token, "branches", b.id)).status).toBe(200);

    // Web.
    const html = await page(`/branches/${c.id}`);
    expect(html.status).toBe(200);
    expect(leaks(html.text)).toBe(false);
    expect(html.text).toContain("hidden by a moderator");
    // MCP: read_branch and the continue_story prompt.
    const { json, result } = await mcpTool("read_branch", { branch_id: c.id });
    expect(result.isError ?? false, json).toBe(false);
    expect(leaks(json)).toBe(false);
    const fromB = on(result.structuredContent.segments, b.id);
    expect(fromB.length).toBeGreaterThan(0);
    expect(fromB.every((s: any) => s.hidden && s.content === "")).toBe(true);
    const prompt = await (await mcpClient(f.w.token)).getPrompt({ name: "continue_story", arguments: { branch_id: c.id } });
    const text = (prompt.messages[0].content as { text: string }).text;
    expect(leaks(text)).toBe(false);
    expect(text).toContain("(hidden by a moderator)");
    // The your_turn context of a bot joining the fork.
    expect((await join(bot.token, c.id)).status).toBe(201);
    const turn = await waitFor(() => received.find((r) => r.url === bot.webhook_url));
    expect(JSON.parse(turn.body).event).toBe("your_turn");
    expect(leaks(turn.body)).toBe(false);
    expect(on(JSON.parse(turn.body).context.previous_segments, b.id)).toHaveLength(2);
    // The live stream's replay.
    const replay = await live(c.id, "?after=0");
    await waitFor(() => replay.frames.length >= 2 || undefined);
    expect(leaks(replay.raw.join("\n"))).toBe(false);
    replay.close();

    // REST: the whole reading path (InkPath's full-story), the summaries.
    const path = await call(`/branches/${c.id}/full-story`);
    expect(path.status, path.text).toBe(200);
    expect(leaks(path.text)).toBe(false);
    expect(on(path.body.data.segments, b.id).map((s: any) => [s.hidden, s.content])).toEqual([
      [true, ""],
      [true, ""],
    ]);
    expect(on(path.body.data.segments, c.id)[0]).toMatchObject({ hidden: false, content: words(4, "forkword") });
    for (const summary of [
      await call(`/branches/${c.id}/summary`),
      await call(`/branches/${c.id}/summary?force_refresh=true`, { token: f.w.token }),
      await call(`/branches/${c.id}/summary`, { token: f.w.token, method: "POST" }),
    ]) {
      expect(summary.status, summary.text).toBe(200);
      expect(leaks(summary.text), summary.text).toBe(false);
    }
    // Their authors see their own text; moderators see both; the fork's creator neither.
    const as = async (token: string) => (await call(`/branches/${c.id}/full-story`, { token })).text;
    expect((await as(f.x.token)).includes(secretX)).toBe(true);
    expect((await as(f.x.token)).includes(secretZ)).toBe(false);
    expect((await as(f.z.token)).includes(secretZ)).toBe(true);
    expect((await as(f.z.token)).includes(secretX)).toBe(false);
    expect(leaks(await as(f.w.token))).toBe(false);
    expect((await as(mod.token)).includes(secretX) && (await as(mod.token)).includes(secretZ)).toBe(true);

    expect((await restore(mod.token, "branches", b.id)).status).toBe(200);
    expect(leaks((await page(`/branches/${c.id}`)).text)).toBe(true);
    expect(leaks((await call(`/branches/${c.id}/full-story`)).text)).toBe(true);
  });
});

describe("reads keyed by a segment or a branch inside hidden content", () => {
  it("a segment's rewrites are 404 when its branch or its story is hidden from the viewer; the branch's creator, the story's owner and moderators read them", async () => {
    const { owner, story } = await storyWithSegments();
    const [creator, teller, stranger] = [await registerHuman(), await registerHuman(), await registerHuman()];
    const secret = unique("zqr");
    const branch = await createBranch(creator.token, story.id, { initial_segment: words(4, "told") });
    const retold = await call(`/segments/${branch.segment.id}/rewrites`, { token: teller.token, body: { content: `${secret} told it otherwise` } });
    expect(retold.status, retold.text).toBe(201);
    const rewrites = (token?: string) => call(`/segments/${branch.segment.id}/rewrites`, { token });

    expect((await hide(mod.token, "branches", branch.id)).status).toBe(200);
    for (const token of [undefined, stranger.token, teller.token]) expectError(await rewrites(token), 404, "NOT_FOUND");
    for (const token of [creator.token, mod.token]) expect((await rewrites(token)).text).toContain(secret);

    expect((await restore(mod.token, "branches", branch.id)).status).toBe(200);
    expect((await rewrites()).text).toContain(secret);
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    for (const token of [undefined, stranger.token, creator.token]) expectError(await rewrites(token), 404, "NOT_FOUND");
    for (const token of [owner.token, mod.token]) expect((await rewrites(token)).text).toContain(secret);
  });

  it("a fork's page names the branches its inherited segments come from, but not a hidden one", async () => {
    const f = await forkedWorld();
    expect((await page(`/branches/${f.c.id}`)).text).toContain(f.b.title);
    expect((await hide(mod.token, "branches", f.b.id)).status).toBe(200);
    const html = await page(`/branches/${f.c.id}`);
    expect(html.status).toBe(200);
    expect(html.text).not.toContain(f.b.title);
    expect(html.text).toContain("an earlier branch");
  });
});

describe("pages that list a hidden branch's text", () => {
  it("a hidden main line leaves its story's page; a bot's segments on a hidden branch leave the bot's page", async () => {
    const { owner, story } = await storyWithSegments();
    const secret = unique("zqm");
    expect((await submit(owner.token, story.main_branch_id, `${secret} ends the main line`)).status).toBe(201);
    const bot = await registerBot();
    const branch = await createBranch(bot.token, story.id, { initial_segment: `${secret} opens a branch` });
    expect((await page(`/stories/${story.id}`)).text).toContain(secret);
    expect((await page(`/bots/${bot.id}`)).text).toContain(secret);
    expect((await hide(mod.token, "branches", story.main_branch_id)).status).toBe(200);
    expect((await hide(mod.token, "branches", branch.id)).status).toBe(200);
    const storyPage = await page(`/stories/${story.id}`);
    expect(storyPage.status).toBe(200);
    expect(storyPage.text).not.toContain(secret);
    expect(shown(await page(`/bots/${bot.id}`))).not.toContain(secret);
  });
});

describe("summaries of hidden branches", () => {
  it("GET ?force_refresh=true and POST …/summary are 404 on a hidden branch or in a hidden story, for everyone, and store nothing; so is the vote summary", async () => {
    const { owner, story } = await storyWithSegments();
    const creator = await registerHuman();
    const stranger = await registerHuman();
    const secret = unique("zqs");
    const branch = await createBranch(creator.token, story.id, { initial_segment: `${secret} was never meant to be read` });
    expect((await hide(mod.token, "branches", branch.id)).status).toBe(200);
    for (const token of [stranger.token, creator.token, owner.token, mod.token]) {
      expectError(await call(`/branches/${branch.id}/summary?force_refresh=true`, { token }), 404, "NOT_FOUND");
      expectError(await call(`/branches/${branch.id}/summary`, { token, method: "POST" }), 404, "NOT_FOUND");
    }
    expectError(await call(`/branches/${branch.id}/summary`), 404, "NOT_FOUND");
    expectError(await call(`/branches/${branch.id}/votes/summary`), 404, "NOT_FOUND");
    expectError(await call(`/branches/${branch.id}/votes/summary`, { token: stranger.token }), 404, "NOT_FOUND");
    expectError(await call(`/segments/${branch.segment.id}/votes/summary`), 404, "NOT_FOUND");
    // Its creator and moderators read it, as they read the branch.
    expect((await call(`/branches/${branch.id}/votes/summary`, { token: creator.token })).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM branch_summaries WHERE branch_id = ?", branch.id)).toBe(0);

    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    const main = story.main_branch_id;
    for (const token of [stranger.token, owner.token, mod.token]) {
      expectError(await call(`/branches/${main}/summary?force_refresh=true`, { token }), 404, "NOT_FOUND");
      expectError(await call(`/branches/${main}/summary`, { token, method: "POST" }), 404, "NOT_FOUND");
    }
    expectError(await call(`/branches/${main}/votes/summary`), 404, "NOT_FOUND");
    expect(await count("SELECT count(*) AS n FROM branch_summaries WHERE branch_id = ?", main)).toBe(0);
  });
});

/** Rows a write into the story could have added. */
const TOUCHED = ["segments", "comments", "votes", "rewrites", "pins", "branch_members", "branches", "logs"] as const;
const WHERE: Record<(typeof TOUCHED)[number], string> = {
  segments: "story_id = ?",
  comments: "branch_id IN (SELECT id FROM branches WHERE story_id = ?)",
  votes: "story_id = ?",
  rewrites: "story_id = ?",
  pins: "story_id = ?",
  branch_members: "story_id = ?",
  branches: "story_id = ?",
  logs: "story_id = ?",
};
const rowsOf = async (storyId: string) =>
  Object.fromEntries(await Promise.all(TOUCHED.map(async (t) => [t, await count(`SELECT count(*) AS n FROM ${t} WHERE ${WHERE[t]}`, storyId)])));

describe("writes into hidden content", () => {
  it("a hidden branch takes no join, segment (its room warm), comment, vote or rewrite: 404 over REST and MCP, nothing written, no key stored", async () => {
    const { owner, story } = await storyWithSegments();
    const creator = await registerHuman();
    const branch = await createBranch(creator.token, story.id, { initial_segment: words(4) });
    const [queued, late] = [await registerBot(), await registerBot()];
    expect((await join(queued.token, branch.id)).status).toBe(201); // the room is warm, and the bot holds the turn
    const voter = await registerHuman();
    const other = await createBranch(creator.token, story.id, { initial_segment: words(4, "other") });
    expect((await call("/votes", { token: voter.token, body: { target_type: "branch", target_id: other.id, vote: 1 } })).status).toBe(201);
    expect((await hide(mod.token, "branches", branch.id)).status).toBe(200);
    const before = await rowsOf(story.id);
    const segmentId = branch.segment.id;
    const key = { "Idempotency-Key": unique("key") };

    expectError(await submit(queued.token, branch.id, words(4)), 404, "NOT_FOUND");
    expectError(await submit(creator.token, branch.id, words(4)), 404, "NOT_FOUND");
    expectError(await call(`/branches/${branch.id}/segments`, { token: owner.token, body: { content: words(4) }, headers: key }), 404, "NOT_FOUND");
    expectError(await join(late.token, branch.id), 404, "NOT_FOUND");
    expectError(await call(`/branches/${branch.id}/comments`, { token: creator.token, body: { content: "still here?" }, headers: key }), 404, "NOT_FOUND");
    expectError(await vote(voter.token, "branch", branch.id, 1), 404, "NOT_FOUND");
    expectError(await vote(voter.token, "segment", segmentId, 1), 404, "NOT_FOUND");
    expectError(await call(`/segments/${segmentId}/rewrites`, { token: voter.token, body: { content: words(4, "again") } }), 404, "NOT_FOUND");
    expectError(await call(`/segments/${segmentId}/rewrites`, { token: creator.token, body: { content: words(4, "again") } }), 404, "NOT_FOUND");
    for (const [client, tool, args] of [
      [await mcpClient(queued.token), "write_segment", { branch_id: branch.id, content: words(4) }],
      [await mcpClient(late.token), "join_branch", { branch_id: branch.id }],
      [await mcpClient(voter.token), "comment", { branch_id: branch.id, content: "hello" }],
      [await mcpClient(voter.token), "vote", { target_type: "segment", target_id: segmentId, vote: 1 }],
    ] as const) {
      const result = (await client.callTool({ name: tool, arguments: args })) as { isError?: boolean; structuredContent?: any };
      expect(result.isError, `${tool} ${JSON.stringify(result)}`).toBe(true);
      expect(result.structuredContent.error.code, tool).toBe("NOT_FOUND");
    }
    expect(await rowsOf(story.id)).toEqual(before);
    expect(await count("SELECT count(*) AS n FROM idempotency_keys WHERE key = ?", key["Idempotency-Key"])).toBe(0);

    // Restored, it takes writes again (the room kept nothing of the refusals).
    expect((await restore(mod.token, "branches", branch.id)).status).toBe(200);
    expect((await submit(queued.token, branch.id, words(4))).status).toBe(201);
    expect((await join(late.token, branch.id)).status).toBe(201);
  });

  it("a hidden branch's queue answers 404 before its turn rule: an out-of-turn write, a queued bot's re-join and wait_for_turn (room warm or cold); a restore reopens it", async () => {
    const { story } = await storyWithSegments();
    const creator = await registerHuman();
    const branch = await createBranch(creator.token, story.id, { initial_segment: words(4) });
    const [holder, waiting] = [await registerBot(), await registerBot()];
    expect((await join(holder.token, branch.id)).status).toBe(201);
    expect((await join(waiting.token, branch.id)).status).toBe(201);
    expect((await hide(mod.token, "branches", branch.id)).status).toBe(200);
    const refusals = async () => {
      // Not its turn: the turn rule alone would answer 403 NOT_YOUR_TURN naming the hidden queue's holder.
      expectError(await submit(waiting.token, branch.id, words(4)), 404, "NOT_FOUND");
      // Already queued: the turn rule alone would answer 200 with the queue.
      expectError(await join(waiting.token, branch.id), 404, "NOT_FOUND");
      const { result } = await mcpTool("wait_for_turn", { branch_id: branch.id, timeout_seconds: 1 }, waiting.token);
      expect(result.isError, JSON.stringify(result)).toBe(true);
      expect(result.structuredContent.error.code).toBe("NOT_FOUND");
    };
    await refusals();
    // A cold room learns it from D1.
    await runInDurableObject(branchRoom(branch.id), async (room) => {
      (room as unknown as { room: null }).room = null;
    });
    await refusals();
    expect((await restore(mod.token, "branches", branch.id)).status).toBe(200);
    expectError(await submit(waiting.token, branch.id, words(4)), 403, "NOT_YOUR_TURN");
    expect((await join(waiting.token, branch.id)).status).toBe(200);
    expect((await submit(holder.token, branch.id, words(4))).status).toBe(201);
  });

  it("a hidden story takes no branch, join, segment, comment, vote, rewrite or pin, even from its owner: 404, nothing written", async () => {
    const { owner, story, segments } = await storyWithSegments();
    const bot = await registerBot();
    const main = story.main_branch_id;
    expect((await join(bot.token, main)).status).toBe(201);
    const voter = await registerHuman();
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    const before = await rowsOf(story.id);
    expectError(await submit(bot.token, main, words(4)), 404, "NOT_FOUND");
    expectError(await submit(owner.token, main, words(4)), 404, "NOT_FOUND");
    expectError(await join((await registerBot()).token, main), 404, "NOT_FOUND");
    expectError(await call(`/branches/${main}/comments`, { token: owner.token, body: { content: "anyone?" } }), 404, "NOT_FOUND");
    expectError(await vote(voter.token, "branch", main, 1), 404, "NOT_FOUND");
    expectError(await vote(voter.token, "segment", segments[1].id, -1), 404, "NOT_FOUND");
    expectError(await call(`/segments/${segments[1].id}/rewrites`, { token: voter.token, body: { content: words(4) } }), 404, "NOT_FOUND");
    expectError(await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "Note", content: "A pin." } }), 404, "NOT_FOUND");
    expectError(await call(`/stories/${story.id}/branches`, { token: owner.token, body: { title: "elsewhere" } }), 404, "NOT_FOUND");
    expect(await rowsOf(story.id)).toEqual(before);
  });

  it("a hidden segment takes no vote, no rewrite, and no vote on its rewrites: 404", async () => {
    const { owner, segments } = await storyWithSegments();
    const target = segments[2];
    const author = await registerHuman();
    const rewrite = await call(`/segments/${target.id}/rewrites`, { token: author.token, body: { content: words(4, "retold") } });
    expect(rewrite.status, rewrite.text).toBe(201);
    expect((await hide(mod.token, "segments", target.id)).status).toBe(200);
    const voter = await registerHuman();
    expectError(await vote(voter.token, "segment", target.id, 1), 404, "NOT_FOUND");
    expectError(await vote(voter.token, "rewrite", rewrite.body.data.id, 1), 404, "NOT_FOUND");
    expectError(await call(`/segments/${target.id}/rewrites`, { token: owner.token, body: { content: words(4) } }), 404, "NOT_FOUND");
    expect(await count("SELECT count(*) AS n FROM votes WHERE voter_id = ?", voter.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM rewrites WHERE segment_id = ?", target.id)).toBe(1);
    // Its neighbours still take both.
    expect((await vote(voter.token, "segment", segments[1].id, 1)).status).toBe(201);
  });

  it("a hide that lands between a write's read and its batch still refuses the write (the check is in the write itself)", async () => {
    const cases: { name: string; hide: (w: World) => [string, string]; path: (w: World) => string; body: (w: World) => unknown }[] = [
      {
        name: "comment",
        hide: (w) => ["branches", w.story.main_branch_id],
        path: (w) => `/branches/${w.story.main_branch_id}/comments`,
        body: () => ({ content: "hi" }),
      },
      {
        name: "vote",
        hide: (w) => ["segments", w.segments[1].id],
        path: () => "/votes",
        body: (w) => ({ target_type: "segment", target_id: w.segments[1].id, vote: 1 }),
      },
      {
        name: "rewrite",
        hide: (w) => ["segments", w.segments[1].id],
        path: (w) => `/segments/${w.segments[1].id}/rewrites`,
        body: () => ({ content: words(4) }),
      },
      {
        name: "fork",
        hide: (w) => ["segments", w.segments[1].id],
        path: (w) => `/stories/${w.story.id}/branches`,
        body: (w) => ({ title: "t", fork_at_segment_id: w.segments[1].id }),
      },
      { name: "pin", hide: (w) => ["stories", w.story.id], path: (w) => `/stories/${w.story.id}/pins`, body: () => ({ title: "T", content: "C" }) },
    ];
    for (const c of cases) {
      const w = await storyWithSegments();
      const voter = await registerHuman(); // votes on the owner's segment: not their own
      const before = await rowsOf(w.story.id);
      const [table, id] = c.hide(w);
      let hidden = false;
      const DB = hideBeforeFirstWrite(env.DB, async () => {
        await env.DB.prepare(`UPDATE ${table} SET hidden_at = ?, hidden_by = ?, hidden_reason = 'a race' WHERE id = ?`)
          .bind(new Date().toISOString(), mod.id, id)
          .run();
        hidden = true;
      });
      const res = await call(c.path(w), { token: c.name === "vote" ? voter.token : w.owner.token, body: c.body(w), env: { DB } });
      expect(hidden, c.name).toBe(true);
      expectError(res, 404, "NOT_FOUND");
      expect(await rowsOf(w.story.id), c.name).toEqual(before);
    }
  });
});

type World = Awaited<ReturnType<typeof storyWithSegments>>;

/**
 * A D1 binding that runs `beforeFirstWrite` once, just before the request's first statement (or batch) that writes:
 * whatever the request read before it was read before that change.
 */
function hideBeforeFirstWrite(db: D1Database, beforeFirstWrite: () => Promise<unknown>): D1Database {
  let done: Promise<unknown> | null = null;
  const ready = () => (done ??= beforeFirstWrite());
  const real = new WeakMap<object, D1PreparedStatement>();
  const writes = new WeakSet<object>();
  const wrap = (statement: D1PreparedStatement, query: string): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, key) {
        if (key === "bind") return (...values: unknown[]) => wrap(target.bind(...values), query);
        const value = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          if (writes.has(proxy)) await ready();
          return value.apply(target, args);
        };
      },
    });
    real.set(proxy, statement);
    if (/^\s*(insert|update|delete)/i.test(query)) writes.add(proxy);
    return proxy;
  };
  const batch = async <T>(inner: D1Database | D1DatabaseSession, statements: D1PreparedStatement[]) => {
    if (statements.some((s) => writes.has(s))) await ready();
    return inner.batch<T>(statements.map((s) => real.get(s) ?? s));
  };
  const session = (inner: D1DatabaseSession): D1DatabaseSession => ({
    prepare: (query: string) => wrap(inner.prepare(query), query),
    batch: <T>(statements: D1PreparedStatement[]) => batch<T>(inner, statements),
    getBookmark: () => inner.getBookmark(),
  });
  return {
    prepare: (query: string) => wrap(db.prepare(query), query),
    batch: <T>(statements: D1PreparedStatement[]) => batch<T>(db, statements),
    exec: (query: string) => db.exec(query),
    withSession: (constraint?: string) => session(db.withSession(constraint)),
    dump: () => db.dump(),
  };
}

describe("webhooks never name hidden content", () => {
  it("a new_branch or your_turn queued before its story or branch was hidden is settled undelivered", async () => {
    const { story } = await storyWithSegments();
    const creator = await registerHuman();
    const branch = await createBranch(creator.token, story.id, { initial_segment: words(4) });
    const bot = await registerBot({ webhook_url: `https://receiver.test/${crypto.randomUUID()}` });
    const at = new Date().toISOString();
    const newBranch: WebhookMessage = {
      deliveryId: crypto.randomUUID(),
      event: "new_branch",
      botId: bot.id,
      branchId: branch.id,
      createdAt: at,
      data: {
        branch_id: branch.id,
        branch_title: branch.title,
        story_id: story.id,
        story_title: story.title,
        creator: { id: creator.id, type: "human", name: "x" },
      },
    };
    const yourTurn: WebhookMessage = { deliveryId: crypto.randomUUID(), event: "your_turn", botId: bot.id, branchId: branch.id, createdAt: at };
    const received = receiver();
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    for (const message of [newBranch, yourTurn]) {
      const ack = vi.fn();
      await handleQueue({ queue: "webhooks", messages: [{ id: "m", body: message, attempts: 1, ack, retry: vi.fn() }] } as never, env);
      expect(ack, message.event).toHaveBeenCalled();
    }
    expect(received).toEqual([]);
    // The same event for a story nobody hid is delivered.
    await restore(mod.token, "stories", story.id);
    await handleQueue(
      {
        queue: "webhooks",
        messages: [{ id: "m", body: { ...newBranch, deliveryId: crypto.randomUUID() }, attempts: 1, ack: vi.fn(), retry: vi.fn() }],
      } as never,
      env,
    );
    expect(received.map((r) => JSON.parse(r.body).story_title)).toEqual([story.title]);
  });
});

describe("a retried your_turn never carries text hidden after its first attempt", () => {
  it("each attempt rebuilds a stored body that shows a segment hidden since (or one on a branch hidden since), and stores it; otherwise the same bytes", async () => {
    const f = await forkedWorld();
    const bot = await registerBot({ webhook_url: `https://receiver.test/${crypto.randomUUID()}` });
    const message: WebhookMessage = {
      deliveryId: crypto.randomUUID(),
      event: "your_turn",
      botId: bot.id,
      branchId: f.c.id,
      createdAt: new Date().toISOString(),
    };
    const received = receiver(() => 500);
    const attempt = async (attempts: number) => {
      await handleQueue({ queue: "webhooks", messages: [{ id: "m", body: message, attempts, ack: vi.fn(), retry: vi.fn() }] } as never, env);
      return received.at(-1)!.body;
    };
    const first = await attempt(1);
    expect(first.includes(f.secretX) && first.includes(f.secretZ)).toBe(true);
    expect(await attempt(2)).toBe(first); // nothing hidden since: the stored bytes

    const zSegment = on(JSON.parse(first).context.previous_segments, f.b.id).find((s: any) => s.content.includes(f.secretZ));
    expect((await hide(mod.token, "segments", zSegment.id)).status).toBe(200);
    const second = await attempt(3);
    expect(second.includes(f.secretZ)).toBe(false);
    expect(second.includes(f.secretX)).toBe(true);
    expect(JSON.parse(second)).toMatchObject({ event: "your_turn", delivery_id: message.deliveryId, created_at: message.createdAt });
    expect(await attempt(4)).toBe(second); // stored for the next retries

    expect((await hide(mod.token, "branches", f.b.id)).status).toBe(200);
    const third = await attempt(5);
    expect(third.includes(f.secretX) || third.includes(f.secretZ)).toBe(false);
    expect(on(JSON.parse(third).context.previous_segments, f.b.id).map((s: any) => [s.hidden, s.content])).toEqual([
      [true, ""],
      [true, ""],
    ]);
    const stored = await env.DB.prepare("SELECT body FROM webhook_deliveries WHERE id = ?").bind(message.deliveryId).first<{ body: string }>();
    expect(stored!.body).toBe(third);
  });
});

describe("InkPath's last paths", () => {
  it("GET /branches/{id}/full-story: the story, the branch with its summary, the whole reading path in order (ancestors included, InkPath's bot_name) and its length", async () => {
    const f = await forkedWorld();
    const res = await call(`/branches/${f.c.id}/full-story`);
    expect(res.status, res.text).toBe(200);
    const data = res.body.data;
    expect(data.story).toMatchObject({ id: f.story.id, title: f.story.title, background: f.story.background, style_rules: null, language: "en" });
    expect(data.branch).toMatchObject({ id: f.c.id, title: f.c.title, parent_branch_id: f.b.id, current_summary: null, hidden: false });
    const path = data.segments;
    expect(data.segments_count).toBe(path.length);
    expect(path.map((s: any) => s.sequence_order)).toEqual(Array.from({ length: path.length }, (_, i) => i + 1));
    expect(path.map((s: any) => s.branch_id)).toEqual([...Array(path.length - 3).fill(f.story.main_branch_id), f.b.id, f.b.id, f.c.id]);
    expect(path[path.length - 2]).toMatchObject({
      bot_id: f.z.id,
      bot_name: f.z.user.username,
      author_name: f.z.user.username,
      content: expect.stringContaining(f.secretZ),
    });
    await call(`/branches/${f.c.id}/summary`, { token: f.w.token, method: "POST" });
    expect((await call(`/branches/${f.c.id}/full-story`)).body.data.branch.current_summary).toEqual(expect.any(String));
    // 404 as the branch is: unknown, or hidden (its creator still reads it).
    expectError(await call(`/branches/${crypto.randomUUID()}/full-story`), 404, "NOT_FOUND");
    await hide(mod.token, "branches", f.c.id);
    expectError(await call(`/branches/${f.c.id}/full-story`), 404, "NOT_FOUND");
    expect((await call(`/branches/${f.c.id}/full-story`, { token: f.w.token })).status).toBe(200);
    const doc = (await call("/openapi.json")).body;
    expect(doc.paths["/branches/{branch_id}/full-story"].get.deprecated).toBe(true);
  });

  it("GET /branches/{id}/summary with none stored answers the extractive summary of the reading path as it is: not stored, no provider called", async () => {
    const f = await forkedWorld();
    const provider = vi.spyOn(globalThis, "fetch");
    const res = await call(`/branches/${f.c.id}/summary`, { env: { LLM_BASE_URL: "https://llm.test/v1", LLM_API_KEY: "k", LLM_MODEL: "m" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      branch_id: f.c.id,
      summary: expect.stringContaining(f.secretX),
      covers_up_to: f.c.segment.sequence_order,
      source: "extractive",
      updated_at: null,
    });
    expect(provider).not.toHaveBeenCalled();
    expect(await count("SELECT count(*) AS n FROM branch_summaries WHERE branch_id = ?", f.c.id)).toBe(0);
    // As it is: a later segment is in the next answer.
    const more = unique("zqm");
    expect((await submit(f.w.token, f.c.id, `${more} sailed on without them`)).status).toBe(201);
    expect((await call(`/branches/${f.c.id}/summary`)).body.data.covers_up_to).toBe(f.c.segment.sequence_order + 1);
  });
});
