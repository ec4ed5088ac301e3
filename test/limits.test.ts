import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { adminInsertSql } from "../scripts/admin-sql";
import type { Env } from "../src/env";
import { addressKey } from "../src/lib/address";
import { type CallResult, call, createBranch, createStory, expectError, registerBot, registerHuman, storyInput, unique, uniqueAddress, words } from "./helpers";

/** The spec's limits, as wrangler.toml sets them (the test config raises them for every other test). */
const SPEC: Partial<Env> = {
  LIMIT_STORIES_PER_HOUR: "10",
  LIMIT_BRANCHES_PER_HOUR: "1",
  LIMIT_HUMAN_BRANCHES_PER_HOUR: "10",
  LIMIT_JOINS_PER_HOUR: "5",
  LIMIT_SEGMENTS_PER_HOUR: "20",
  LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR: "2",
  LIMIT_SEGMENTS_PER_DAY: "100",
  LIMIT_VOTES_PER_HOUR: "50",
  LIMIT_COMMENTS_PER_HOUR: "10",
};
const limited = (token: string, path: string, body: unknown, patch: Partial<Env> = {}) => call(path, { token, body, env: { ...SPEC, ...patch } });

function expectRemaining(res: CallResult, limit: number, remaining: number) {
  expect(res.headers.get("x-ratelimit-limit")).toBe(String(limit));
  expect(res.headers.get("x-ratelimit-remaining")).toBe(String(remaining));
  expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
}

function expectLimited(res: CallResult, code: string, label: string) {
  const err = expectError(res, 429, code);
  expect(err.details).toEqual({ limit: label, retry_after: expect.any(Number), reset_time: expect.stringMatching(/Z$/) });
  expect(err.details.retry_after).toBeGreaterThan(0);
  expect(res.headers.get("retry-after")).toBe(String(err.details.retry_after));
  expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
}

/** Sends `n` accepted requests, checking the countdown, then one more that must be refused. */
async function toTheBoundary(n: number, send: (i: number) => Promise<CallResult>) {
  for (let i = 0; i < n; i++) {
    const res = await send(i);
    expect(res.status, res.text).toBeLessThan(300);
    expectRemaining(res, n, n - i - 1);
  }
  return send(n);
}

describe("per-account limits, each at its boundary", () => {
  it("stories: the 10th passes, the 11th is 429 and writes nothing", async () => {
    const human = await registerHuman();
    const refused = await toTheBoundary(10, () => limited(human.token, "/stories", storyInput()));
    expectLimited(refused, "RATE_LIMIT_EXCEEDED", "10 per hour");
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM stories WHERE owner_id = ?").bind(human.id).first<{ n: number }>())!;
    expect(n).toBe(10);
  });

  it("branches, a bot's: the 1st passes, the 2nd is 429", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(human.token);
    const refused = await toTheBoundary(1, () => limited(bot.token, `/stories/${story.id}/branches`, { title: "b" }));
    expectLimited(refused, "RATE_LIMIT_EXCEEDED", "1 per hour");
  });

  it("branches, a person's: the 10th passes, the 11th is 429", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const refused = await toTheBoundary(10, () => limited(human.token, `/stories/${story.id}/branches`, { title: "b" }));
    expectLimited(refused, "RATE_LIMIT_EXCEEDED", "10 per hour");
  });

  it("joins: the 5th passes, the 6th is 429", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(human.token);
    const branches = [story.main_branch_id];
    for (let i = 0; i < 5; i++) branches.push((await createBranch(human.token, story.id)).id);
    const refused = await toTheBoundary(5, (i) => limited(bot.token, `/branches/${branches[i]}/join`, {}));
    expectLimited(refused, "RATE_LIMIT_EXCEEDED", "5 per hour");
  });

  it("segments, a bot's outside turn mode: 2 per branch, then 20 in all per hour", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(human.token);
    const branches = [story.main_branch_id];
    for (let i = 0; i < 10; i++) branches.push((await createBranch(human.token, story.id)).id);
    const perBranch = await toTheBoundary(2, () => limited(bot.token, `/branches/${branches[0]}/segments`, { content: words(4) }));
    expectLimited(perBranch, "RATE_LIMIT_EXCEEDED", "2 per hour");
    // 2 already written on branch 0: 18 more across branches 1–9 reach 20 in all.
    for (let i = 0; i < 18; i++) {
      const res = await limited(bot.token, `/branches/${branches[1 + Math.floor(i / 2)]}/segments`, { content: words(4) });
      expect(res.status, res.text).toBe(201);
      // the per-branch counter is the closest on the 1st of each pair, the overall one once it gets lower
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(Math.min(i % 2 ? 0 : 1, 20 - 3 - i)));
    }
    expectLimited(await limited(bot.token, `/branches/${branches[10]}/segments`, { content: words(4) }), "RATE_LIMIT_EXCEEDED", "20 per hour");
  });

  it("segments, a person's: 20 in a row on their own story's main line, the 21st is 429 (no per-branch limit)", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    // Each success shows the tightest counter that applies to a person: the hourly one (20), not the per-branch one.
    const refused = await toTheBoundary(20, () => limited(human.token, `/branches/${story.main_branch_id}/segments`, { content: words(4) }));
    expectLimited(refused, "RATE_LIMIT_EXCEEDED", "20 per hour");
  });

  it("a person's evening: 10 segments in a row on their own story and 3 forks in the hour, each continued", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    for (let i = 0; i < 10; i++) {
      const res = await limited(human.token, `/branches/${story.main_branch_id}/segments`, { content: words(4, `s${i}`) });
      expect(res.status, res.text).toBe(201);
      expectRemaining(res, 20, 19 - i);
    }
    for (let i = 0; i < 3; i++) {
      const fork = await limited(human.token, `/stories/${story.id}/branches`, { title: `what if ${i}` });
      expect(fork.status, fork.text).toBe(201);
      expectRemaining(fork, 10, 9 - i);
      const res = await limited(human.token, `/branches/${fork.body.data.id}/segments`, { content: words(4) });
      expect(res.status, res.text).toBe(201);
    }
  });

  it("segments: the 100th of the day passes, the 101st is 429 DAILY_QUOTA_EXCEEDED", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token, { max_length: 10 });
    const daily = { LIMIT_SEGMENTS_PER_HOUR: "1000", LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR: "1000" };
    const refused = await toTheBoundary(100, () => limited(human.token, `/branches/${story.main_branch_id}/segments`, { content: words(4) }, daily));
    expectLimited(refused, "DAILY_QUOTA_EXCEEDED", "100 per day");
  });

  it("votes: the 50th passes, the 51st is 429", async () => {
    const owner = await registerHuman();
    const voter = await registerHuman();
    const story = await createStory(owner.token);
    const targets = [story.main_branch_id];
    for (let i = 0; i < 50; i++) targets.push((await createBranch(owner.token, story.id)).id);
    const refused = await toTheBoundary(50, (i) => limited(voter.token, "/votes", { target_type: "branch", target_id: targets[i], vote: 1 }));
    expectLimited(refused, "RATE_LIMIT_EXCEEDED", "50 per hour");
  });

  it("comments: 10 per hour; refused requests (400) count nothing", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const path = `/branches/${story.main_branch_id}/comments`;
    for (let i = 0; i < 3; i++) expectError(await limited(human.token, path, { content: "" }), 400, "VALIDATION_ERROR");
    expectError(await limited(human.token, `/branches/${crypto.randomUUID()}/comments`, { content: "x" }), 404, "NOT_FOUND");
    const refused = await toTheBoundary(10, (i) => limited(human.token, path, { content: `c${i}` }));
    expectLimited(refused, "RATE_LIMIT_EXCEEDED", "10 per hour");
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM comments WHERE author_id = ?").bind(human.id).first<{ n: number }>())!;
    expect(n).toBe(10);
  });
});

describe("counting under concurrency, and who is exempt", () => {
  it("20 parallel story creations under a limit of 10: exactly 10 pass and 10 stories exist", async () => {
    const human = await registerHuman();
    const results = await Promise.all(Array.from({ length: 20 }, () => limited(human.token, "/stories", storyInput())));
    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429)).toHaveLength(10);
    const remaining = results
      .filter((r) => r.status === 201)
      .map((r) => Number(r.headers.get("x-ratelimit-remaining")))
      .sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM stories WHERE owner_id = ?").bind(human.id).first<{ n: number }>())!;
    expect(n).toBe(10);
  });

  it("30 parallel segments over 30 branches under a limit of 20: the rooms count in D1, exactly 20 pass and 20 exist", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const branches = await Promise.all(Array.from({ length: 30 }, () => createBranch(human.token, story.id)));
    const results = await Promise.all(branches.map((b) => limited(human.token, `/branches/${b.id}/segments`, { content: words(4) })));
    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    for (const refused of results.filter((r) => r.status !== 201)) expectLimited(refused, "RATE_LIMIT_EXCEEDED", "20 per hour");
    const remaining = results
      .filter((r) => r.status === 201)
      .map((r) => Number(r.headers.get("x-ratelimit-remaining")))
      .sort((a, b) => a - b);
    // Each write's hourly counter as its own batch saw it (a person has no per-branch counter): one each of 19 to 0.
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const sql = "SELECT count(*) AS n FROM segments WHERE author_id = ? AND branch_id != ?";
    const { n } = (await env.DB.prepare(sql).bind(human.id, story.main_branch_id).first<{ n: number }>())!;
    expect(n).toBe(20);
  });

  it("a refused segment counts nothing: a 422 (too short) leaves the countdown where it was", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const first = await limited(human.token, `/branches/${story.main_branch_id}/segments`, { content: words(4) });
    expectRemaining(first, 20, 19);
    expectError(await limited(human.token, `/branches/${story.main_branch_id}/segments`, { content: "x" }), 422, "SEGMENT_TOO_SHORT");
    expectRemaining(await limited(human.token, `/branches/${story.main_branch_id}/segments`, { content: words(4) }), 20, 18);
  });

  it("admins are exempt: 12 stories under a limit of 10 all pass", async () => {
    const email = `${unique("root")}@example.com`;
    await env.DB.exec((await adminInsertSql({ username: unique("root"), email, password: "admin password" })).sql);
    const token = (await call("/auth/login", { body: { email, password: "admin password" } })).body.access_token;
    for (let i = 0; i < 12; i++) expect((await limited(token, "/stories", storyInput())).status).toBe(201);
  });

  it("anonymous reads: 600 per minute per address; credentials are not counted", async () => {
    const ip = { "CF-Connecting-IP": uniqueAddress() };
    // The local binding counts in wall-clock minutes: start early in one, so all 601 reads fall into it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    for (let i = 0; i < 600; i++) {
      const res = await call("/health", { headers: ip });
      if (res.status !== 200) throw new Error(`read ${i + 1} was refused: ${res.text}`);
    }
    const refused = await call("/health", { headers: ip });
    const err = expectError(refused, 429, "RATE_LIMIT_EXCEEDED");
    expect(err.details.limit).toBe("600 per minute");
    expect(refused.headers.get("retry-after")).toBe("60");
    expect((await call("/health", { headers: { "CF-Connecting-IP": uniqueAddress() } })).status).toBe(200);
    const human = await registerHuman();
    expect((await call("/auth/me", { headers: ip, token: human.token })).status).toBe(200);
  });

  it("anonymous reads ask the rate-limiting binding once per lease of ten, and a refusal is not a lease", async () => {
    const calls: string[] = [];
    const real = env.READ_LIMITER!;
    const counting = {
      limit: (options: { key: string }) => {
        calls.push(options.key);
        return real.limit(options);
      },
    } as RateLimit;
    const ip = { "CF-Connecting-IP": uniqueAddress() };
    for (let i = 0; i < 25; i++) expect((await call("/health", { headers: ip, env: { READ_LIMITER: counting } })).status).toBe(200);
    expect(calls).toEqual(Array(3).fill(`read:${addressKey(ip["CF-Connecting-IP"])}`));
    // Another address has its own leases.
    await call("/health", { headers: { "CF-Connecting-IP": uniqueAddress() }, env: { READ_LIMITER: counting } });
    expect(calls).toHaveLength(4);
    // A binding that refuses grants nothing: every read asks again and is refused.
    const refusing = {
      limit: async () => {
        calls.push("refused");
        return { success: false };
      },
    } as RateLimit;
    const blocked = { "CF-Connecting-IP": uniqueAddress() };
    for (let i = 0; i < 3; i++) expectError(await call("/health", { headers: blocked, env: { READ_LIMITER: refusing } }), 429, "RATE_LIMIT_EXCEEDED");
    expect(calls.filter((c) => c === "refused")).toHaveLength(3);
  });
});
