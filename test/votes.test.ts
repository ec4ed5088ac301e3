import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, expectError, registerBot, registerHuman, storyWithSegments, submit, vote, words } from "./helpers";

/** Gives `authorId` a reputation of exactly `total` by recording human upvotes on one of its segments. */
async function seedReputation(authorId: string, segment: { id: string; branch_id: string }, storyId: string, total: number) {
  const now = new Date().toISOString();
  for (let i = 0; i < total; i++) {
    await env.DB.prepare(
      `INSERT INTO votes (id, voter_id, voter_type, target_type, target_id, vote, effective_weight, story_id, branch_id, target_author_id, target_author_type, created_at, updated_at)
       VALUES (?, ?, 'human', 'segment', ?, 1, 1, ?, ?, ?, 'bot', ?, ?)`,
    )
      .bind(crypto.randomUUID(), crypto.randomUUID(), segment.id, storyId, segment.branch_id, authorId, now, now)
      .run();
  }
}

describe("POST /votes", () => {
  it("records a human's vote with weight 1 (201) and replaces it in both directions (200)", async () => {
    const { story, segments } = await storyWithSegments();
    const voter = await registerHuman();
    const first = await vote(voter.token, "segment", segments[1].id, 1);
    expect(first.status).toBe(201);
    expect(first.body.data).toEqual({
      vote: {
        id: expect.any(String),
        voter_id: voter.id,
        voter_type: "human",
        target_type: "segment",
        target_id: segments[1].id,
        vote: 1,
        effective_weight: 1,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      new_score: 1,
    });
    const down = await vote(voter.token, "segment", segments[1].id, -1);
    expect(down.status).toBe(200);
    expect(down.body.data.vote).toMatchObject({ id: first.body.data.vote.id, vote: -1 });
    expect(down.body.data.new_score).toBe(-1);
    const up = await vote(voter.token, "segment", segments[1].id, 1);
    expect(up.status).toBe(200);
    expect(up.body.data.new_score).toBe(1);
    const summary = (await call(`/segments/${segments[1].id}/votes/summary`)).body.data;
    expect(summary).toEqual({ total_score: 1, score: 1, upvotes: 1, downvotes: 0, human_votes: 1, bot_votes: 0 });
    const branch = (await call(`/branches/${story.main_branch_id}`)).body.data;
    expect(branch.vote_score).toBe(1);
  });

  it("accepts an API token, and weighs bots by reputation tier: 0.3, 0.5, 0.8", async () => {
    const { story, segments } = await storyWithSegments();
    const human = await registerHuman();
    const apiToken = (await call("/auth/api-token/generate", { method: "POST", token: human.token })).body.token;
    expect((await vote(apiToken, "branch", story.main_branch_id, 1)).body.data.vote).toMatchObject({ voter_type: "human", effective_weight: 1 });

    const tiers: [number, number][] = [
      [0, 0.3],
      [9, 0.3],
      [10, 0.5],
      [49, 0.5],
      [50, 0.8],
    ];
    for (const [reputation, weight] of tiers) {
      const bot = await registerBot();
      const own = (await submit(bot.token, story.main_branch_id, words(4))).body.data;
      await seedReputation(bot.id, own, story.id, reputation);
      expect((await call(`/bots/${bot.id}/reputation`)).body.data.reputation).toBe(reputation);
      const res = await vote(bot.token, "segment", segments[0].id, 1);
      expect(res.body.data.vote, `reputation ${reputation}`).toMatchObject({ voter_type: "bot", effective_weight: weight });
    }
  });

  it("earns a bot its weight through real votes: ten human upvotes lift it to 0.5", async () => {
    const { story, segments } = await storyWithSegments();
    const bot = await registerBot();
    const own = (await submit(bot.token, story.main_branch_id, words(4))).body.data;
    const humans = await Promise.all(Array.from({ length: 10 }, () => registerHuman()));
    for (const h of humans) expect((await vote(h.token, "segment", own.id, 1)).status).toBe(201);
    const rep = (await call(`/bots/${bot.id}/reputation`)).body.data;
    expect(rep).toEqual({ bot_id: bot.id, reputation: 10, total_segments: 1, avg_score: 10 });
    expect((await vote(bot.token, "segment", segments[0].id, -1)).body.data.vote.effective_weight).toBe(0.5);
  });

  it("leaves exactly one vote when one voter votes ten times at once", async () => {
    const { segments } = await storyWithSegments();
    const voter = await registerHuman();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => vote(voter.token, "segment", segments[2].id, i % 2 ? 1 : -1)));
    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM votes WHERE voter_id = ? AND target_id = ?")
      .bind(voter.id, segments[2].id)
      .first<{ n: number }>())!;
    expect(n).toBe(1);
    const summary = (await call(`/segments/${segments[2].id}/votes/summary`)).body.data;
    expect(summary.upvotes + summary.downvotes).toBe(1);
  });

  it("refuses voting on your own segment or rewrite with 403 PERMISSION_DENIED", async () => {
    const { owner, segments } = await storyWithSegments();
    expectError(await vote(owner.token, "segment", segments[1].id, 1), 403, "PERMISSION_DENIED");
    const rewrite = (await call(`/segments/${segments[1].id}/rewrites`, { token: owner.token, body: { content: words(4) } })).body.data;
    expectError(await vote(owner.token, "rewrite", rewrite.id, 1), 403, "PERMISSION_DENIED");
    const other = await registerHuman();
    const ok = await vote(other.token, "rewrite", rewrite.id, 1);
    expect(ok.status).toBe(201);
    expect(ok.body.data.vote.target_type).toBe("rewrite");
  });

  it("answers 400 for a bad vote, target type or missing target, and 404 for an unknown target", async () => {
    const { story } = await storyWithSegments();
    const voter = await registerHuman();
    for (const body of [
      { target_type: "branch", target_id: story.main_branch_id, vote: 2 },
      { target_type: "branch", target_id: story.main_branch_id, vote: 0 },
      { target_type: "branch", target_id: story.main_branch_id, vote: "1" },
      { target_type: "story", target_id: story.id, vote: 1 },
      { target_type: "branch", vote: 1 },
    ]) {
      expectError(await call("/votes", { token: voter.token, body }), 400, "VALIDATION_ERROR");
    }
    expectError(await vote(voter.token, "segment", crypto.randomUUID(), 1), 404, "NOT_FOUND");
    expectError(await vote(voter.token, "branch", "not-a-uuid", 1), 404, "NOT_FOUND");
    expectError(await vote(voter.token, "rewrite", story.main_branch_id, 1), 404, "NOT_FOUND");
  });
});

describe("vote summaries", () => {
  it("sums weighted votes by kind on a branch, and 404s unknown targets", async () => {
    const { story } = await storyWithSegments();
    const h1 = await registerHuman();
    const h2 = await registerHuman();
    const bot = await registerBot();
    await vote(h1.token, "branch", story.main_branch_id, 1);
    await vote(h2.token, "branch", story.main_branch_id, -1);
    await vote(bot.token, "branch", story.main_branch_id, 1);
    const s = (await call(`/branches/${story.main_branch_id}/votes/summary`)).body.data;
    expect(s).toEqual({ total_score: 0.3, score: 0.3, upvotes: 2, downvotes: 1, human_votes: 2, bot_votes: 1 });
    expectError(await call(`/branches/${crypto.randomUUID()}/votes/summary`), 404, "NOT_FOUND");
    expectError(await call(`/segments/${crypto.randomUUID()}/votes/summary`), 404, "NOT_FOUND");
    expectError(await call("/segments/zzz/votes/summary"), 404, "NOT_FOUND");
  });
});
