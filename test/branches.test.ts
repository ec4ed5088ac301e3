import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createBranch, createStory, expectError, registerBot, registerHuman, submit, words } from "./helpers";

async function setup() {
  const human = await registerHuman();
  const story = await createStory(human.token);
  const main = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments;
  return { human, story, main };
}

describe("POST /stories/{id}/branches", () => {
  it("forks from a segment, numbering on from the fork point, with nested aliases", async () => {
    const { human, story, main } = await setup();
    const res = await call(`/stories/${story.id}/branches`, {
      token: human.token,
      body: { title: "Dark turn", description: "What if", fork_at_segment_id: main[1].id, initial_segment: words(4) },
    });
    expect(res.status, res.text).toBe(201);
    const d = res.body.data;
    expect(d).toMatchObject({
      title: "Dark turn",
      description: "What if",
      story_id: story.id,
      parent_branch_id: story.main_branch_id,
      fork_at_segment_id: main[1].id,
      creator_bot_id: null,
      creator_id: human.id,
      creator_type: "human",
      status: "active",
    });
    expect(d.branch).toEqual(Object.fromEntries(Object.entries(d).filter(([k]) => k !== "branch" && k !== "segment")));
    expect(d.segment).toMatchObject({ branch_id: d.id, sequence_order: 3, content: words(4) });
    const next = await submit(human.token, d.id, words(5));
    expect(next.body.data.sequence_order).toBe(4);
  });

  it("defaults to the head of the main line, or of the given parent", async () => {
    const { human, story, main } = await setup();
    const fromMain = await createBranch(human.token, story.id);
    expect(fromMain).toMatchObject({ parent_branch_id: story.main_branch_id, fork_at_segment_id: main[3].id });
    expect((await submit(human.token, fromMain.id, words(4))).body.data.sequence_order).toBe(5);
    const child = await createBranch(human.token, story.id, { parent_branch_id: fromMain.id });
    const head = (await call(`/branches/${fromMain.id}/segments`)).body.data.segments[0];
    expect(child).toMatchObject({ parent_branch_id: fromMain.id, fork_at_segment_id: head.id });
    const empty = await createBranch(human.token, story.id, { fork_at_segment_id: main[0].id });
    const grand = await createBranch(human.token, story.id, { parent_branch_id: empty.id });
    expect(grand.fork_at_segment_id).toBe(main[0].id);
    expect((await submit(human.token, grand.id, words(4))).body.data.sequence_order).toBe(2);
  });

  it("records a bot creator as creator_bot_id", async () => {
    const { story } = await setup();
    const bot = await registerBot();
    const b = await createBranch(bot.token, story.id);
    expect(b).toMatchObject({ creator_bot_id: bot.id, creator_type: "bot" });
  });

  it("refuses ids pointing elsewhere with 400 naming the field", async () => {
    const { human, story, main } = await setup();
    const other = await createStory(human.token);
    const otherSegs = (await call(`/branches/${other.main_branch_id}/segments`)).body.data.segments;
    const sibling = await createBranch(human.token, story.id, { fork_at_segment_id: main[1].id, initial_segment: words(4) });
    const siblingSeg = sibling.segment.id;
    const cases: [Record<string, unknown>, string][] = [
      [{ fork_at_segment_id: otherSegs[0].id }, "fork_at_segment_id"],
      [{ fork_at_segment_id: crypto.randomUUID() }, "fork_at_segment_id"],
      [{ fork_at_segment_id: "junk" }, "fork_at_segment_id"],
      [{ parent_branch_id: other.main_branch_id }, "parent_branch_id"],
      [{ parent_branch_id: "junk" }, "parent_branch_id"],
      // main[3] comes after the sibling's fork point, so it is not on the sibling's reading path
      [{ parent_branch_id: sibling.id, fork_at_segment_id: main[3].id }, "fork_at_segment_id"],
      [{ parent_branch_id: story.main_branch_id, fork_at_segment_id: siblingSeg }, "fork_at_segment_id"],
    ];
    for (const [body, field] of cases) {
      const res = await call(`/stories/${story.id}/branches`, { token: human.token, body: { title: "x", ...body } });
      expect(expectError(res, 400, "VALIDATION_ERROR").details.fields[0].field, JSON.stringify(body)).toBe(field);
    }
    const onPath = await createBranch(human.token, story.id, { parent_branch_id: sibling.id, fork_at_segment_id: main[0].id });
    expect(onPath.parent_branch_id).toBe(sibling.id);
  });

  it("applies the length rules to initial_segment (422) and the title rule (400)", async () => {
    const { human, story } = await setup();
    const short = await call(`/stories/${story.id}/branches`, { token: human.token, body: { title: "t", initial_segment: "two words" } });
    expect(expectError(short, 422, "SEGMENT_TOO_SHORT").details).toMatchObject({ current_length: 2, min_length: 3 });
    const long = await call(`/stories/${story.id}/branches`, { token: human.token, body: { title: "t", initial_segment: words(51) } });
    expectError(long, 422, "SEGMENT_TOO_LONG");
    expectError(await call(`/stories/${story.id}/branches`, { token: human.token, body: { title: "" } }), 400, "VALIDATION_ERROR");
    expectError(await call(`/stories/${story.id}/branches`, { token: human.token, body: { title: "x".repeat(101) } }), 400, "VALIDATION_ERROR");
  });

  it("refuses control characters other than tab and newline in title and description (400 naming the field)", async () => {
    const { human, story } = await setup();
    for (const [body, field] of [
      [{ title: "\u001b]0;owned\u0007" }, "title"],
      [{ title: "fo\rrk" }, "title"],
      [{ title: "fork", description: "An ending\u001b[2J" }, "description"],
      [{ title: "fork", description: "\u0085next line" }, "description"],
    ] as const) {
      const res = await call(`/stories/${story.id}/branches`, { token: human.token, body });
      expect(
        expectError(res, 400, "VALIDATION_ERROR").details.fields.map((f: any) => f.field),
        JSON.stringify(body),
      ).toEqual([field]);
    }
    const ok = await createBranch(human.token, story.id, { title: "fork\tone", description: "Line one.\nLine two.\r\nLine three." });
    expect(ok.description).toBe("Line one.\nLine two.\r\nLine three.");
  });

  it("answers 404 for an unknown story and 403 FORBIDDEN on an archived one", async () => {
    const { human, story } = await setup();
    expectError(await call(`/stories/${crypto.randomUUID()}/branches`, { token: human.token, body: { title: "t" } }), 404, "NOT_FOUND");
    await call(`/stories/${story.id}`, { method: "PATCH", token: human.token, body: { status: "archived" } });
    expectError(await call(`/stories/${story.id}/branches`, { token: human.token, body: { title: "t" } }), 403, "FORBIDDEN");
  });
});

describe("GET /stories/{id}/branches", () => {
  it("puts the main line first under every sort, defaulting to 6 per page", async () => {
    const { human, story } = await setup();
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await createBranch(human.token, story.id));
    // Give the last branch the most activity: two segments.
    await submit(human.token, made[6].id, words(4));
    await submit(human.token, made[6].id, words(4));
    await env.DB.prepare("UPDATE branches SET vote_score = 5 WHERE id = ?").bind(made[2].id).run();
    const def = (await call(`/stories/${story.id}/branches`)).body.data;
    expect(def.pagination).toEqual({ limit: 6, offset: 0, total: 8, has_more: true });
    expect(def.branches).toHaveLength(6);
    expect(def.branches[0].id).toBe(story.main_branch_id);
    expect(def.branches[1].id).toBe(made[2].id); // 0.5 × 5 = 2.5 beats 0.3 × 2 = 0.6
    expect(def.branches[2].id).toBe(made[6].id);
    const byDate = (await call(`/stories/${story.id}/branches?sort=created_at&limit=100`)).body.data.branches;
    expect(byDate.map((b: any) => b.id)).toEqual([story.main_branch_id, ...made.map((b) => b.id)]);
    const byVotes = (await call(`/stories/${story.id}/branches?sort=vote_score&limit=3`)).body.data.branches;
    expect(byVotes.map((b: any) => b.id)).toEqual([story.main_branch_id, made[2].id, made[0].id]);
    const page2 = (await call(`/stories/${story.id}/branches?sort=created_at&limit=3&offset=3`)).body.data;
    expect(page2.branches.map((b: any) => b.id)).toEqual(made.slice(2, 5).map((b) => b.id));
    expect(page2.pagination.has_more).toBe(true);
    const item = def.branches[0];
    for (const k of [
      "id",
      "title",
      "description",
      "parent_branch_id",
      "creator_bot_id",
      "segments_count",
      "active_bots_count",
      "activity_score",
      "created_at",
    ]) {
      expect(item).toHaveProperty(k);
    }
    expect(item.activity_score).toBeCloseTo(0.3 * 4);
  });

  it("validates sort, include_all and pagination, and 404s an unknown story", async () => {
    const { story } = await setup();
    for (const q of ["sort=popular", "include_all=maybe", "limit=0", "offset=-2"]) {
      expectError(await call(`/stories/${story.id}/branches?${q}`), 400, "VALIDATION_ERROR");
    }
    expect((await call(`/stories/${story.id}/branches?include_all=true`)).status).toBe(200);
    expectError(await call(`/stories/${crypto.randomUUID()}/branches`), 404, "NOT_FOUND");
  });
});

describe("GET /stories/{id}/branches/tree", () => {
  it("nests forks under their parents with the main line at the root", async () => {
    const { human, story } = await setup();
    const a = await createBranch(human.token, story.id);
    const b = await createBranch(human.token, story.id);
    const a1 = await createBranch(human.token, story.id, { parent_branch_id: a.id });
    const a1x = await createBranch(human.token, story.id, { parent_branch_id: a1.id });
    const res = await call(`/stories/${story.id}/branches/tree`);
    expect(res.status).toBe(200);
    const shape = (n: any): any => ({ id: n.id, children: n.children.map(shape) });
    expect(res.body.data.tree.map(shape)).toEqual([
      {
        id: story.main_branch_id,
        children: [
          { id: a.id, children: [{ id: a1.id, children: [{ id: a1x.id, children: [] }] }] },
          { id: b.id, children: [] },
        ],
      },
    ]);
    expect(res.body.data.tree[0].title).toBe("main line");
    expectError(await call(`/stories/${crypto.randomUUID()}/branches/tree`), 404, "NOT_FOUND");
  });
});

describe("GET /branches/{id}", () => {
  it("returns the branch with its segments and its queue (members in turn order, current turn, deadline); unknown ids are 404", async () => {
    const { story } = await setup();
    const bot1 = await registerBot();
    const bot2 = await registerBot();
    await call(`/branches/${story.main_branch_id}/join`, { token: bot1.token, body: {} });
    await call(`/branches/${story.main_branch_id}/join`, { token: bot2.token, body: { role: "voice" } });
    const res = await call(`/branches/${story.main_branch_id}`);
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d).toMatchObject({ id: story.main_branch_id, story_id: story.id, segments_count: 4, active_bots_count: 2 });
    expect(d.segments).toHaveLength(4);
    expect(d.queue.turn_mode).toBe(true);
    expect(d.queue.current_turn).toMatchObject({ bot_id: bot1.id, name: bot1.name, deadline: expect.stringMatching(/Z$/) });
    expect(d.queue.members).toEqual([
      { bot_id: bot1.id, name: bot1.name, role: "narrator", your_turn_order: 1, sits_out_until: null },
      { bot_id: bot2.id, name: bot2.name, role: "voice", your_turn_order: 2, sits_out_until: null },
    ]);
    expect(d.queue.resumes_at).toBeNull();
    expectError(await call(`/branches/${crypto.randomUUID()}`), 404, "NOT_FOUND");
    expectError(await call("/branches/123"), 404, "NOT_FOUND");
  });
});
