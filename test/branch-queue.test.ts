import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { getDb } from "../src/db/client";
import type { BranchRoom } from "../src/durable/branch";
import { memberStatement } from "../src/turns/store";
import { branchRoom, call, createStory, expectError, join, leave, registerBot, registerHuman, submit, words } from "./helpers";

async function threeBots() {
  const human = await registerHuman();
  const story = await createStory(human.token);
  const branch = story.main_branch_id;
  const bots = [await registerBot(), await registerBot(), await registerBot()];
  for (const [i, bot] of bots.entries()) {
    const res = await join(bot.token, branch);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ your_turn_order: i + 1, join_order: i + 1, queue_length: i + 1, current_turn: bots[0].id });
  }
  return { human, story, branch, bots };
}

describe("POST /branches/{id}/join", () => {
  it("a first join is 201 with the bot's place in the queue; joining again is 200 with the same place", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const bot = await registerBot();
    const first = await join(bot.token, story.main_branch_id, "challenger");
    expect(first.status).toBe(201);
    expect(first.body.data).toEqual({
      branch_id: story.main_branch_id,
      bot_id: bot.id,
      role: "challenger",
      your_turn_order: 1,
      join_order: 1,
      queue_length: 1,
      current_turn: bot.id,
      joined_at: expect.stringMatching(/Z$/),
    });
    const again = await join(bot.apiKey, story.main_branch_id);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
  });

  it("refuses a role that does not exist with 400 and an unknown or malformed branch id with 404", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const bot = await registerBot();
    expectError(await join(bot.token, story.main_branch_id, "villain"), 400, "VALIDATION_ERROR");
    expectError(await join(bot.token, crypto.randomUUID()), 404, "NOT_FOUND");
    expectError(await join(bot.token, "xyz"), 404, "NOT_FOUND");
  });
});

describe("the turn queue", () => {
  it("rotates three bots in join order and wraps around, naming next_bot", async () => {
    const { branch, bots } = await threeBots();
    const order = [0, 1, 2, 0, 1, 2, 0];
    for (const [k, i] of order.entries()) {
      const res = await submit(bots[i].token, branch, words(4));
      expect(res.status, res.text).toBe(201);
      const next = bots[order[k + 1] ?? 1];
      expect(res.body.data.next_bot).toEqual({ id: next.id, name: next.name });
    }
    const seqs = (await call(`/branches/${branch}/segments?limit=100`)).body.data.segments.map((s: any) => s.sequence_order);
    expect(seqs).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
  });

  it("a bot out of turn gets 403 NOT_YOUR_TURN with current_turn and estimated_wait; a bot not queued gets it with estimated_wait null and is told to join", async () => {
    const { branch, bots } = await threeBots();
    const err = expectError(await submit(bots[2].token, branch, words(4)), 403, "NOT_YOUR_TURN");
    expect(err.details).toMatchObject({ current_turn: bots[0].id, your_bot_id: bots[2].id });
    // bot 2 waits for what is left of bot 0's hour plus bot 1's full hour
    expect(err.details.estimated_wait).toBeGreaterThan(3600 + 3500);
    expect(err.details.estimated_wait).toBeLessThanOrEqual(7200);
    const stranger = await registerBot();
    const e2 = expectError(await submit(stranger.token, branch, words(4)), 403, "NOT_YOUR_TURN");
    expect(e2.details).toEqual({ current_turn: bots[0].id, your_bot_id: stranger.id, estimated_wait: null });
    expect(e2.message).toMatch(/join/i);
  });

  it("lets a human write mid-rotation without moving the turn", async () => {
    const { human, branch, bots } = await threeBots();
    expect((await submit(bots[0].token, branch, words(4))).status).toBe(201);
    const h = await submit(human.token, branch, words(4));
    expect(h.status).toBe(201);
    expect(h.body.data.next_bot).toEqual({ id: bots[1].id, name: bots[1].name });
    expectError(await submit(bots[0].token, branch, words(4)), 403, "NOT_YOUR_TURN");
    expect((await submit(bots[1].token, branch, words(4))).status).toBe(201);
  });

  it("a bot writes freely on a branch with no queue, without entering turn mode", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const bot = await registerBot();
    for (let i = 0; i < 2; i++) {
      const res = await submit(bot.token, story.main_branch_id, words(4));
      expect(res.status).toBe(201);
      expect(res.body.data.next_bot).toBeNull();
    }
  });

  it("leaving keeps the others' order, passes the turn when the leaver held it, and rejoining goes to the end", async () => {
    const { branch, bots } = await threeBots();
    const left = await call(`/branches/${branch}/leave`, { token: bots[0].token, method: "POST" });
    expect(left.status).toBe(200);
    expect(left.body.data).toEqual({ branch_id: branch, bot_id: bots[0].id, left: true, queue_length: 2, current_turn: bots[1].id });
    const rejoin = await join(bots[0].token, branch);
    expect(rejoin.status).toBe(201);
    expect(rejoin.body.data).toMatchObject({ your_turn_order: 3, current_turn: bots[1].id });
    const queue = (await call(`/branches/${branch}`)).body.data.queue;
    expect(queue.members.map((m: any) => [m.bot_id, m.your_turn_order])).toEqual([
      [bots[1].id, 1],
      [bots[2].id, 2],
      [bots[0].id, 3],
    ]);
    expect((await submit(bots[1].token, branch, words(4))).body.data.next_bot.id).toBe(bots[2].id);
    const middle = await call(`/branches/${branch}/leave`, { token: bots[1].token, method: "POST" });
    expect(middle.body.data.current_turn).toBe(bots[2].id);
    expectError(await call(`/branches/${branch}/leave`, { token: bots[1].token, method: "POST" }), 404, "NOT_FOUND");
  });

  it("the last bot leaving ends turn mode: no current turn, no members, no active bots", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const bot = await registerBot();
    await join(bot.token, story.main_branch_id);
    const left = await call(`/branches/${story.main_branch_id}/leave`, { token: bot.token, method: "POST" });
    expect(left.body.data).toMatchObject({ queue_length: 0, current_turn: null });
    const detail = (await call(`/branches/${story.main_branch_id}`)).body.data;
    expect(detail.queue).toEqual({ turn_mode: false, current_turn: null, resumes_at: null, members: [] });
    expect(detail.active_bots_count).toBe(0);
  });

  it("an alarm passes a stalled turn to the next bot, with a fresh hour-long deadline", async () => {
    const { branch, bots } = await threeBots();
    expect(await runDurableObjectAlarm(branchRoom(branch))).toBe(true);
    let queue = (await call(`/branches/${branch}`)).body.data.queue;
    expect(queue.current_turn.bot_id).toBe(bots[1].id);
    expectError(await submit(bots[0].token, branch, words(4)), 403, "NOT_YOUR_TURN");
    expect((await submit(bots[1].token, branch, words(4))).status).toBe(201);
    await runDurableObjectAlarm(branchRoom(branch));
    await runDurableObjectAlarm(branchRoom(branch));
    queue = (await call(`/branches/${branch}`)).body.data.queue;
    expect(queue.current_turn.bot_id).toBe(bots[1].id);
    expect(Date.parse(queue.current_turn.deadline) - Date.now()).toBeGreaterThan(3500_000);
  });

  it("a refused write neither moves the turn nor leaves a gap", async () => {
    const { human, story, branch, bots } = await threeBots();
    await call(`/stories/${story.id}`, { method: "PATCH", token: human.token, body: { status: "archived" } });
    expectError(await submit(bots[0].token, branch, words(4)), 403, "FORBIDDEN");
    expectError(await submit(bots[0].token, branch, "too short"), 422, "SEGMENT_TOO_SHORT");
    await call(`/stories/${story.id}`, { method: "PATCH", token: human.token, body: { status: "active" } });
    expect((await call(`/branches/${branch}`)).body.data.queue.current_turn.bot_id).toBe(bots[0].id);
    const res = await submit(bots[0].token, branch, words(4));
    expect(res.status).toBe(201);
    expect(res.body.data.sequence_order).toBe(5);
    expect(res.body.data.next_bot.id).toBe(bots[1].id);
  });
});

describe("many bots joining at once", () => {
  it("concurrent joins give distinct, contiguous turn orders", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const bots = await Promise.all(Array.from({ length: 8 }, () => registerBot()));
    const results = await Promise.all([...bots, ...bots].map((b) => join(b.token, story.main_branch_id)));
    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    expect(results.filter((r) => r.status === 201)).toHaveLength(8);
    const orders = results
      .filter((r) => r.status === 201)
      .map((r) => r.body.data.your_turn_order)
      .sort((a, b) => a - b);
    expect(orders).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const detail = (await call(`/branches/${story.main_branch_id}`)).body.data;
    expect(detail.active_bots_count).toBe(8);
  });
});

interface TurnState {
  members: string[];
  currentTurn: string | null;
  deadline: number | null;
  /** Until when each bot sitting out (by id) sits out, epoch ms. */
  sittingOut: Record<string, number>;
}

/** What the room holds: its members' bot ids in turn order, the current turn and its deadline (epoch ms); null before it loads. */
const roomTurn = (branchId: string) =>
  runInDurableObject(branchRoom(branchId), (room: BranchRoom) => (room as BranchRoom & { turnSnapshot(): TurnState | null }).turnSnapshot());

/** What D1 holds: the queue mirror in join order (with who sits out until when), and the branch's current turn and deadline. */
async function d1Turn(branchId: string): Promise<TurnState> {
  const { results } = await env.DB.prepare("SELECT bot_id, sits_out_until FROM branch_members WHERE branch_id = ? ORDER BY join_seq")
    .bind(branchId)
    .all<{ bot_id: string; sits_out_until: string | null }>();
  const branch = await env.DB.prepare("SELECT current_turn_bot_id, turn_deadline FROM branches WHERE id = ?")
    .bind(branchId)
    .first<{ current_turn_bot_id: string | null; turn_deadline: string | null }>();
  return {
    members: results.map((r) => r.bot_id),
    currentTurn: branch!.current_turn_bot_id,
    deadline: branch!.turn_deadline === null ? null : Date.parse(branch!.turn_deadline),
    sittingOut: Object.fromEntries(results.flatMap((r) => (r.sits_out_until ? [[r.bot_id, Date.parse(r.sits_out_until)]] : []))),
  };
}

/** The room and D1 hold the same queue, turn and deadline, and it is the one expected; returns the deadline. */
async function expectRoomAgreesWithD1(branchId: string, expected: { members: string[]; currentTurn: string | null }) {
  const room = await roomTurn(branchId);
  const d1 = await d1Turn(branchId);
  expect(room).toEqual(d1);
  expect({ members: d1.members, currentTurn: d1.currentTurn }).toEqual(expected);
  return d1.deadline;
}

const HOUR = 3600_000;
/** A turn that began between `before` and now ends an hour after it began (TURN_TIMEOUT_SECONDS is 3600 here). */
function expectFreshDeadline(deadline: number | null, before: number) {
  expect(deadline! - before).toBeGreaterThanOrEqual(HOUR);
  expect(deadline! - Date.now()).toBeLessThanOrEqual(HOUR);
}

describe("the branch room agrees with D1", () => {
  it("a room that has never loaded has no snapshot", async () => {
    const story = await createStory((await registerHuman()).token);
    expect(await roomTurn(story.main_branch_id)).toBeNull();
  });

  it("after each join: the members in join order, the first joiner's turn, and its deadline an hour away", async () => {
    const story = await createStory((await registerHuman()).token);
    const branch = story.main_branch_id;
    const bots = [await registerBot(), await registerBot(), await registerBot()];
    const before = Date.now();
    await join(bots[0].token, branch);
    const deadline = await expectRoomAgreesWithD1(branch, { members: [bots[0].id], currentTurn: bots[0].id });
    expectFreshDeadline(deadline, before);
    await join(bots[1].token, branch);
    expect(await expectRoomAgreesWithD1(branch, { members: [bots[0].id, bots[1].id], currentTurn: bots[0].id })).toBe(deadline);
    await join(bots[2].token, branch);
    await join(bots[1].token, branch); // joining again changes nothing
    expect(await expectRoomAgreesWithD1(branch, { members: bots.map((b) => b.id), currentTurn: bots[0].id })).toBe(deadline);
  });

  it("after each submission: a bot's segment passes the turn with a fresh deadline, a human's moves nothing", async () => {
    const { human, branch, bots } = await threeBots();
    const ids = bots.map((b) => b.id);
    await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[0] });
    const before = Date.now();
    expect((await submit(bots[0].token, branch, words(4))).status).toBe(201);
    const deadline = await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[1] });
    expectFreshDeadline(deadline, before);
    expect((await submit(human.token, branch, words(4))).status).toBe(201);
    expect(await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[1] })).toBe(deadline);
    expectError(await submit(bots[0].token, branch, words(4)), 403, "NOT_YOUR_TURN");
    expect(await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[1] })).toBe(deadline);
    for (const i of [1, 2]) expect((await submit(bots[i].token, branch, words(4))).status).toBe(201);
    await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[0] });
  });

  it("after each leave: the leaver gone, the turn passed on only when it held it, no turn once the last one leaves", async () => {
    const { branch, bots } = await threeBots();
    const ids = bots.map((b) => b.id);
    const deadline = await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[0] });
    expect((await leave(bots[1].token, branch)).status).toBe(200);
    expect(await expectRoomAgreesWithD1(branch, { members: [ids[0], ids[2]], currentTurn: ids[0] })).toBe(deadline);
    const before = Date.now();
    expect((await leave(bots[0].token, branch)).status).toBe(200);
    expectFreshDeadline(await expectRoomAgreesWithD1(branch, { members: [ids[2]], currentTurn: ids[2] }), before);
    expect((await join(bots[0].token, branch)).status).toBe(201);
    await expectRoomAgreesWithD1(branch, { members: [ids[2], ids[0]], currentTurn: ids[2] });
    for (const bot of [bots[2], bots[0]]) expect((await leave(bot.token, branch)).status).toBe(200);
    expect(await expectRoomAgreesWithD1(branch, { members: [], currentTurn: null })).toBeNull();
  });

  it("after each limit at a bot's turn: it sits out in both, the turn passes past it, and with all sitting out nobody holds it until the first is back", async () => {
    const { branch, bots } = await threeBots();
    const ids = bots.map((b) => b.id);
    const back: string[] = [];
    for (const [i, next] of [
      [0, ids[1]],
      [1, ids[2]],
      [2, null],
    ] as const) {
      const refused = await call(`/branches/${branch}/segments`, { token: bots[i].token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } });
      back.push(expectError(refused, 429, "RATE_LIMIT_EXCEEDED").details.sits_out_until);
      const deadline = await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: next });
      expect((await roomTurn(branch))!.sittingOut).toEqual(Object.fromEntries(back.map((at, k) => [ids[k], Date.parse(at)])));
      if (next === null) expect(deadline).toBe(Date.parse(back[0]));
    }
    // The first return: its turn begins (the room's alarm at that deadline).
    expect(await runDurableObjectAlarm(branchRoom(branch))).toBe(true);
    await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[0] });
  });

  it("with a limit of 0, a bot refused again while it sits out keeps its return: nothing written, the room and D1 unchanged", async () => {
    const story = await createStory((await registerHuman()).token);
    const branch = story.main_branch_id;
    const bot = await registerBot();
    await join(bot.token, branch);
    const none = { token: bot.token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } };
    const until = expectError(await call(`/branches/${branch}/segments`, none), 429, "RATE_LIMIT_EXCEEDED").details.sits_out_until;
    const row = () =>
      env.DB.prepare("SELECT m.sits_out_until, b.turn_deadline, b.updated_at FROM branch_members m JOIN branches b ON b.id = m.branch_id WHERE b.id = ?")
        .bind(branch)
        .first();
    const before = await row();
    for (let i = 0; i < 3; i++) {
      expect(expectError(await call(`/branches/${branch}/segments`, none), 429, "RATE_LIMIT_EXCEEDED").details).toMatchObject({
        sits_out_until: until,
        turn_passed: false,
      });
    }
    expect(await row()).toEqual(before);
    expect((await roomTurn(branch))!.sittingOut).toEqual({ [bot.id]: Date.parse(until) });
  });

  it("a join that meets a queue row the room did not know of (another instance wrote it) starts the bot afresh: not sitting out, in both", async () => {
    const story = await createStory((await registerHuman()).token);
    const branch = story.main_branch_id;
    const [first, bot] = [await registerBot(), await registerBot()];
    await join(first.token, branch); // the room is warm
    const later = new Date(Date.now() + HOUR).toISOString();
    await env.DB.prepare(
      "INSERT INTO branch_members (branch_id, bot_id, story_id, role, join_seq, joined_at, sits_out_until) VALUES (?, ?, ?, 'narrator', 7, ?, ?)",
    )
      .bind(branch, bot.id, story.id, new Date().toISOString(), later)
      .run();
    expect((await join(bot.token, branch)).status).toBe(201);
    await expectRoomAgreesWithD1(branch, { members: [first.id, bot.id], currentTurn: first.id });
    expect((await d1Turn(branch)).sittingOut).toEqual({});
  });

  it("after a write by a bot sitting out that its limit allows (the limit raised since): it is back in, in both", async () => {
    const story = await createStory((await registerHuman()).token);
    const branch = story.main_branch_id;
    const bot = await registerBot();
    await join(bot.token, branch);
    const refused = await call(`/branches/${branch}/segments`, { token: bot.token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } });
    expectError(refused, 429, "RATE_LIMIT_EXCEEDED");
    await expectRoomAgreesWithD1(branch, { members: [bot.id], currentTurn: null });
    expect((await submit(bot.token, branch, words(4))).status).toBe(201);
    await expectRoomAgreesWithD1(branch, { members: [bot.id], currentTurn: bot.id });
    expect((await roomTurn(branch))!.sittingOut).toEqual({});
  });

  it("after each alarm: the stalled turn passed to the next bot, wrapping around, with a fresh deadline", async () => {
    const { branch, bots } = await threeBots();
    const ids = bots.map((b) => b.id);
    await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[0] });
    for (const i of [1, 2, 0]) {
      const before = Date.now();
      expect(await runDurableObjectAlarm(branchRoom(branch))).toBe(true);
      expectFreshDeadline(await expectRoomAgreesWithD1(branch, { members: ids, currentTurn: ids[i] }), before);
    }
  });
});

describe("memberStatement: one condition, honoured by every kind of queue change", () => {
  it.each([
    ["add", (botId: string) => ({ add: { botId, name: "x", role: "narrator", joinSeq: 9, joinedAt: new Date().toISOString(), sitsOutUntil: null } })],
    ["remove", (botId: string) => ({ remove: botId })],
    ["sitOut", (botId: string) => ({ sitOut: botId, until: Date.now() + HOUR })],
  ] as const)("%s: nothing while the condition is false, the change once it is true", async (kind, change) => {
    const story = await createStory((await registerHuman()).token);
    const place = { branchId: story.main_branch_id, storyId: story.id };
    const bot = await registerBot();
    if (kind !== "add") await join(bot.token, place.branchId);
    const row = () => env.DB.prepare("SELECT sits_out_until FROM branch_members WHERE branch_id = ? AND bot_id = ?").bind(place.branchId, bot.id).first();
    const before = await row();
    const db = getDb(env.DB);
    await memberStatement(db, place, change(bot.id) as never, sql`AND 0`);
    expect(await row()).toEqual(before);
    await memberStatement(db, place, change(bot.id) as never, sql`AND 1`);
    expect(await row()).not.toEqual(before);
  });
});
