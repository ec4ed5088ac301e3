// Runs alone (vitest.config.ts): its sweeps wake every overdue row and room, not only its own.
import { createExecutionContext, createScheduledController, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { outboxStatements, publish, yourTurnMessage } from "../src/domain/events/webhook-events";
import { getDb } from "../src/db/client";
import type { BranchRoom } from "../src/durable/branch";
import worker from "../src/index";
import { sweep } from "../src/queue/sweeper";
import { call, createStory, expectError, join, registerAdmin, registerBot, registerHuman, storyWithSegments, submit, words } from "./helpers";

/** Recovery paths that can be reached without a real crash; `npm run test:crash` is the end-to-end proof. */

const room = (branchId: string) => env.BRANCH_ROOM.get(env.BRANCH_ROOM.idFromName(branchId));
const gate = (actorId: string) => env.ACCOUNT_GATE.get(env.ACCOUNT_GATE.idFromName(actorId));
const withKey = (key: string, token: string, path: string, body: unknown) => call(path, { token, body, headers: { "Idempotency-Key": key } });
/** What a crash between D1's commit and the gate's bookkeeping leaves: D1 has the write, the gate knows nothing. */
const forgetAnswers = (actorId: string) => runInDurableObject(gate(actorId), (_i, state) => void state.storage.sql.exec("DELETE FROM stored_answers"));

/** The room is evicted and its alarm lost, as if a crash came between D1's commit and setAlarm. */
const crash = (branchId: string) =>
  runInDurableObject(room(branchId), async (r: BranchRoom, state) => {
    await state.storage.deleteAlarm();
    (r as unknown as { room: null }).room = null;
  });

afterEach(() => vi.restoreAllMocks());

describe("a room that starts cold trusts what D1 holds", () => {
  it("enforces the turn D1 records, though the room never wrote it", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const [b1, b2] = [await registerBot(), await registerBot()];
    const branch = story.main_branch_id;
    // Another instance of the room (since crashed) queued both bots and passed the turn to b2: only D1 knows.
    const deadline = new Date(Date.now() + 3600_000).toISOString();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO branch_members (branch_id, bot_id, story_id, role, join_seq, joined_at) VALUES (?, ?, ?, 'narrator', 1, ?), (?, ?, ?, 'narrator', 2, ?)",
      ).bind(branch, b1.id, story.id, deadline, branch, b2.id, story.id, deadline),
      env.DB.prepare("UPDATE branches SET current_turn_bot_id = ?, turn_deadline = ?, active_bots_count = 2 WHERE id = ?").bind(b2.id, deadline, branch),
    ]);
    expect(await runInDurableObject(room(branch), (r: BranchRoom) => r.turnSnapshot())).toBeNull();
    expect((await call(`/branches/${branch}`)).body.data.queue.current_turn.bot_id).toBe(b2.id);
    expectError(await submit(b1.token, branch, words(4)), 403, "NOT_YOUR_TURN");
    const ok = await submit(b2.token, branch, words(4));
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.sequence_order).toBe(5); // after the starter and three initial segments
    expect(ok.body.data.next_bot.id).toBe(b1.id);
    expect(await runInDurableObject(room(branch), (r: BranchRoom) => r.turnSnapshot())).toMatchObject({ members: [b1.id, b2.id], currentTurn: b1.id });
    expect((await call(`/branches/${branch}/leave`, { method: "POST", token: b2.token })).status).toBe(200);
  });

  it("re-arms its alarm for D1's deadline when a cold start follows a lost one", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    const branch = story.main_branch_id;
    expect((await join(bot.token, branch)).status).toBe(201);
    await crash(branch);
    await env.DB.prepare("UPDATE branches SET turn_deadline = ? WHERE id = ?")
      .bind(new Date(Date.now() - 120_000).toISOString(), branch)
      .run();
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController(), env, ctx);
    await waitOnExecutionContext(ctx);
    const alarm = await runInDurableObject(room(branch), (_r, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
  });
});

describe("a bot sitting out (a limit refused it at its turn) survives a crash", () => {
  const limited = (token: string, branchId: string) =>
    call(`/branches/${branchId}/segments`, { token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } });
  it("a cold room skips the bot D1 records as sitting out", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const [a, b] = [await registerBot(), await registerBot()];
    await join(a.token, branch);
    await join(b.token, branch);
    const until = expectError(await limited(a.token, branch), 429, "RATE_LIMIT_EXCEEDED").details.sits_out_until;
    await crash(branch);
    const wrote = await submit(b.token, branch, words(4));
    expect(wrote.status, wrote.text).toBe(201);
    expect(wrote.body.data.next_bot.id).toBe(b.id); // a is skipped: its turn comes only once it is back
    expect(expectError(await submit(a.token, branch, words(4)), 403, "NOT_YOUR_TURN").details.sits_out_until).toBe(until);
  });

  it("a return whose alarm a crash lost: the sweeper wakes the room, and the turn resumes with its your_turn", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const bot = await registerBot({ webhook_url: "https://receiver.test/hook" });
    await join(bot.token, branch);
    expectError(await limited(bot.token, branch), 429, "RATE_LIMIT_EXCEEDED");
    expect((await call(`/branches/${branch}`)).body.data.queue.current_turn).toBeNull();
    await crash(branch);
    // Meanwhile the bot's return came, two minutes ago, unnoticed.
    const past = new Date(Date.now() - 120_000).toISOString();
    await env.DB.batch([
      env.DB.prepare("UPDATE branch_members SET sits_out_until = ? WHERE branch_id = ?").bind(past, branch),
      env.DB.prepare("UPDATE branches SET turn_deadline = ? WHERE id = ?").bind(past, branch),
    ]);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController(), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await runInDurableObject(room(branch), (_r, state) => state.storage.getAlarm())).not.toBeNull();
    expect(await runDurableObjectAlarm(room(branch))).toBe(true);
    expect((await call(`/branches/${branch}`)).body.data.queue).toMatchObject({ current_turn: { bot_id: bot.id }, resumes_at: null });
    const turns = await env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE bot_id = ? AND event = 'your_turn'").bind(bot.id).first<{ n: number }>();
    expect(turns!.n).toBe(2); // the join's, and the return's
  });
});

describe("a hide whose request died before the rooms were told", () => {
  /** A hide's batch (its row and audit entry), without the `moderated` calls after it. */
  const hiddenInD1 = (table: "branches" | "stories", type: "branch" | "story", id: string) => {
    const now = new Date().toISOString();
    return env.DB.batch([
      env.DB.prepare(`UPDATE ${table} SET hidden_at = ?, hidden_by = 'x', hidden_reason = 'spam' WHERE id = ?`).bind(now, id),
      env.DB.prepare("INSERT INTO audit_log (id, actor_id, actor_name, action, target_type, target_id, created_at) VALUES (?, 'x', 'x', 'hide', ?, ?, ?)").bind(
        crypto.randomUUID(),
        type,
        id,
        now,
      ),
    ]);
  };

  it("the sweeper tells the warm rooms of a hidden branch and of every branch of a hidden story: their queues answer 404, not from memory", async () => {
    const { owner, story } = await storyWithSegments();
    const fork = (await call(`/stories/${story.id}/branches`, { token: owner.token, body: { title: "a fork", initial_segment: words(4) } })).body.data;
    const [a, b] = [await registerBot(), await registerBot()];
    for (const branch of [fork.id, story.main_branch_id]) for (const bot of [a, b]) expect((await join(bot.token, branch)).status).toBe(201);

    await hiddenInD1("branches", "branch", fork.id);
    // The warm room still believes the branch open: it answers from memory, naming the holder.
    expectError(await submit(b.token, fork.id, words(4)), 403, "NOT_YOUR_TURN");
    expect((await sweep(env)).told).toBeGreaterThanOrEqual(1);
    expectError(await submit(b.token, fork.id, words(4)), 404, "NOT_FOUND");
    expectError(await join(b.token, fork.id), 404, "NOT_FOUND");

    await hiddenInD1("stories", "story", story.id);
    expectError(await submit(b.token, story.main_branch_id, words(4)), 403, "NOT_YOUR_TURN");
    expect((await sweep(env)).told).toBeGreaterThanOrEqual(2);
    expectError(await submit(b.token, story.main_branch_id, words(4)), 404, "NOT_FOUND");
    // Telling a room again changes nothing; a hide restored since is not told.
    await call(`/admin/stories/${story.id}/restore`, { token: (await registerAdmin()).token, method: "POST" });
    expect((await sweep(env)).told).toBe(1); // the fork, still hidden
    expectError(await submit(b.token, story.main_branch_id, words(4)), 403, "NOT_YOUR_TURN");
  });
});

describe("an Idempotency-Key retried after a crash never writes twice", () => {
  it("replays a committed segment whose answer the gate lost, writing nothing", async () => {
    const { owner, story } = await storyWithSegments();
    const path = `/branches/${story.main_branch_id}/segments`;
    const first = await withKey("seg-1", owner.token, path, { content: words(5) });
    expect(first.status).toBe(201);
    await forgetAnswers(owner.id);
    const again = await withKey("seg-1", owner.token, path, { content: words(5) });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await call(`${path}?limit=100`)).body.data.pagination.total).toBe(5);
    await forgetAnswers(owner.id);
    expectError(await withKey("seg-1", owner.token, path, { content: words(6) }), 422, "IDEMPOTENCY_KEY_REUSED");
  });

  it("replays a bot's committed segment even though the turn has passed since (the rule would refuse the retry)", async () => {
    const { story } = await storyWithSegments();
    const [a, b] = [await registerBot(), await registerBot()];
    await join(a.token, story.main_branch_id);
    await join(b.token, story.main_branch_id);
    const path = `/branches/${story.main_branch_id}/segments`;
    const first = await withKey("turn-1", a.token, path, { content: words(5) });
    expect(first.status).toBe(201);
    await forgetAnswers(a.id);
    const again = await withKey("turn-1", a.token, path, { content: words(5) });
    expect([again.status, again.headers.get("idempotent-replayed"), again.headers.get("retry-after")]).toEqual([201, "true", null]);
    expect(again.body).toEqual(first.body);
  });

  it("replays a committed story, join and vote the same way", async () => {
    const human = await registerHuman();
    const story = await withKey("story-1", human.token, "/stories", {
      title: "Kept",
      background: "A background long enough.",
      starter: "s",
      initial_segments: ["a b c", "d e f", "g h i"],
      language: "en",
      min_length: 1,
      max_length: 50,
    });
    expect(story.status).toBe(201);
    await forgetAnswers(human.id);
    const storyAgain = await withKey("story-1", human.token, "/stories", {
      title: "Kept",
      background: "A background long enough.",
      starter: "s",
      initial_segments: ["a b c", "d e f", "g h i"],
      language: "en",
      min_length: 1,
      max_length: 50,
    });
    expect(storyAgain.body).toEqual(story.body);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM stories WHERE owner_id = ?").bind(human.id).first<{ n: number }>();
    expect(count!.n).toBe(1);

    const bot = await registerBot();
    const branch = story.body.data.main_branch_id;
    const joined = await withKey("join-1", bot.token, `/branches/${branch}/join`, {});
    expect(joined.status).toBe(201);
    await forgetAnswers(bot.id);
    const joinedAgain = await withKey("join-1", bot.token, `/branches/${branch}/join`, {});
    expect([joinedAgain.status, joinedAgain.body]).toEqual([201, joined.body]);

    const segment = (await call(`/branches/${branch}/segments`)).body.data.segments[1];
    const voted = await withKey("vote-1", bot.token, "/votes", { target_type: "segment", target_id: segment.id, vote: 1 });
    expect(voted.status).toBe(201);
    await forgetAnswers(bot.id);
    const votedAgain = await withKey("vote-1", bot.token, "/votes", { target_type: "segment", target_id: segment.id, vote: 1 });
    expect(votedAgain.status).toBe(201);
    expect(votedAgain.headers.get("idempotent-replayed")).toBe("true");
    expect(votedAgain.body).toEqual(voted.body);
  });
});

describe("limits count only what committed", () => {
  const oneComment = { LIMIT_COMMENTS_PER_HOUR: "1" };

  it("a reservation whose request died stops counting when its lease runs out", async () => {
    const { owner, story } = await storyWithSegments();
    const path = `/branches/${story.main_branch_id}/comments`;
    await runInDurableObject(gate(owner.id), (_g, state) => {
      state.storage.sql.exec("INSERT INTO counted_hits (reservation, key, at, pending) VALUES ('dead', 'comment', ?, 1)", Date.now() - 180_000);
    });
    expect((await call(path, { token: owner.token, body: { content: "after the crash" }, env: oneComment })).status).toBe(201);
  });

  it("a live reservation still counts, so concurrent requests cannot overshoot", async () => {
    const { owner, story } = await storyWithSegments();
    const path = `/branches/${story.main_branch_id}/comments`;
    await runInDurableObject(gate(owner.id), (_g, state) => {
      state.storage.sql.exec("INSERT INTO counted_hits (reservation, key, at, pending) VALUES ('live', 'comment', ?, 1)", Date.now());
    });
    expectError(await call(path, { token: owner.token, body: { content: "one too many" }, env: oneComment }), 429, "RATE_LIMIT_EXCEEDED");
  });
});

describe("turn notifications are never lost", () => {
  it("writes the your_turn intent with the change that begins the turn", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot({ webhook_url: "https://receiver.test/hook" });
    const silent = await registerBot();
    expect((await join(bot.token, story.main_branch_id)).status).toBe(201);
    expect((await join(silent.token, story.main_branch_id)).status).toBe(201);
    const rows = await env.DB.prepare("SELECT bot_id, event, branch_id FROM outbox WHERE branch_id = ?").bind(story.main_branch_id).all();
    expect(rows.results).toEqual([{ bot_id: bot.id, event: "your_turn", branch_id: story.main_branch_id }]);
  });

  it("the scheduled sweeper re-queues an intent overdue by a minute, and the consumer settles it", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot({ webhook_url: "https://receiver.test/hook" });
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    const old = { ...yourTurnMessage(bot.id, story.main_branch_id), createdAt: new Date(Date.now() - 120_000).toISOString() };
    const fresh = yourTurnMessage(bot.id, story.main_branch_id);
    const db = getDb(env.DB);
    await db.batch([...outboxStatements(db, [old, fresh])] as [ReturnType<typeof outboxStatements>[number]]);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController(), env, ctx);
    await waitOnExecutionContext(ctx);
    const row = (id: string) =>
      env.DB.prepare("SELECT sends, settled_at FROM outbox WHERE id = ?").bind(id).first<{ sends: number; settled_at: string | null }>();
    expect((await row(old.deliveryId))!.sends).toBe(1);
    expect(await row(fresh.deliveryId)).toEqual({ sends: 0, settled_at: null });
    for (let i = 0; i < 100 && !(await row(old.deliveryId))!.settled_at; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await row(old.deliveryId))!.settled_at).not.toBeNull();
    const delivery = await env.DB.prepare("SELECT status FROM webhook_deliveries WHERE id = ?").bind(old.deliveryId).first();
    expect(delivery).toEqual({ status: "delivered" });
  });

  it("records a failed hand-over to the queue on the intent instead of swallowing it", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot({ webhook_url: "https://receiver.test/hook" });
    const db = getDb(env.DB);
    const message = yourTurnMessage(bot.id, story.main_branch_id);
    await db.batch([...outboxStatements(db, [message])] as [ReturnType<typeof outboxStatements>[number]]);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const refusing = { sendBatch: async () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue;
    await publish(refusing, db, [message]);
    const row = await env.DB.prepare("SELECT last_error, settled_at FROM outbox WHERE id = ?").bind(message.deliveryId).first();
    expect(row).toEqual({ last_error: "queue send failed: queue unavailable", settled_at: null });
  });
});
