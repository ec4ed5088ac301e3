import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createStory, expectError, hanzi, registerBot, registerHuman, storyInput, unique, words } from "./helpers";

describe("POST /stories", () => {
  it("creates the story, its main line, the starter and the initial segments in order", async () => {
    const human = await registerHuman();
    const res = await call("/stories", { token: human.token, body: storyInput({ style_rules: "Third person." }) });
    expect(res.status).toBe(201);
    const story = res.body.data;
    expect(story).toMatchObject({
      title: expect.any(String),
      background: expect.any(String),
      starter: "Once upon a time.",
      style_rules: "Third person.",
      language: "en",
      min_length: 3,
      max_length: 50,
      owner_id: human.id,
      owner_type: "human",
      status: "active",
    });
    expect(story.created_at).toMatch(/Z$/);
    const segs = await call(`/branches/${story.main_branch_id}/segments`);
    expect(segs.body.data.segments.map((s: any) => [s.sequence_order, s.is_starter])).toEqual([
      [1, true],
      [2, false],
      [3, false],
      [4, false],
    ]);
    expect(segs.body.data.segments[1].content).toBe(words(5, "a"));
    const branches = await call(`/stories/${story.id}/branches`);
    expect(branches.body.data.branches[0]).toMatchObject({ id: story.main_branch_id, title: "main line", is_main: true, segments_count: 4 });
  });

  it("lets a bot own a story and defaults language and lengths", async () => {
    const bot = await registerBot();
    const { language: _l, min_length: _a, max_length: _b, ...input } = storyInput({ initial_segments: [hanzi(150), hanzi(200), hanzi(500)] });
    const res = await call("/stories", { token: bot.token, body: input });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ owner_id: bot.id, owner_type: "bot", language: "zh", min_length: 150, max_length: 500 });
  });

  it("takes starter and initial_segments from story_pack when absent, explicit fields winning", async () => {
    const human = await registerHuman();
    const pack = { meta: { genre: "noir" }, cast: [{ name: "Ann" }], starter: "Pack starter.", initial_segments: [words(4), words(4), words(4), words(4)] };
    const { starter: _s, initial_segments: _i, ...rest } = storyInput();
    const res = await call("/stories", { token: human.token, body: { ...rest, story_pack: pack } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.starter).toBe("Pack starter.");
    const got = await call(`/stories/${res.body.data.id}`);
    expect(got.body.data.story_pack).toEqual(pack);
    expect((await call(`/branches/${res.body.data.main_branch_id}/segments`)).body.data.pagination.total).toBe(5);
    const explicit = await call("/stories", { token: human.token, body: { ...storyInput(), story_pack: pack } });
    expect(explicit.body.data.starter).toBe("Once upon a time.");
  });

  it("names every missing field in one 400", async () => {
    const human = await registerHuman();
    const err = expectError(await call("/stories", { token: human.token, body: {} }), 400, "VALIDATION_ERROR");
    for (const f of ["title", "background", "starter", "initial_segments"]) expect(err.message).toContain(f);
  });

  it("refuses out-of-range fields with 400 naming the field", async () => {
    const human = await registerHuman();
    const cases: [Record<string, unknown>, string][] = [
      [{ title: "" }, "title"],
      [{ title: "x".repeat(101) }, "title"],
      [{ background: "too short" }, "background"],
      [{ background: "x".repeat(5001) }, "background"],
      [{ initial_segments: [words(4), words(4)] }, "initial_segments"],
      [{ initial_segments: Array(6).fill(words(4)) }, "initial_segments"],
      [{ initial_segments: "not an array" }, "initial_segments"],
      [{ min_length: 10, max_length: 5 }, "min_length"],
      [{ min_length: 0 }, "min_length"],
      [{ max_length: 100_001 }, "max_length"],
      [{ language: "english!" }, "language"],
    ];
    for (const [patch, field] of cases) {
      const err = expectError(await call("/stories", { token: human.token, body: storyInput(patch) }), 400, "VALIDATION_ERROR");
      expect(
        err.details.fields.map((f: any) => f.field),
        JSON.stringify(patch),
      ).toContain(field);
    }
  });

  it("refuses control characters other than tab and newline in title, background and style_rules (400 naming the field)", async () => {
    const human = await registerHuman();
    const cases: [Record<string, unknown>, string][] = [
      [{ title: "\u001b]0;owned\u0007 Tale" }, "title"],
      [{ title: "Tale\u0000" }, "title"],
      [{ background: "A harbour town.\u001b[2J\u001b[H where the tide never comes back." }, "background"],
      [{ background: "A harbour town where the tide\rnever comes back." }, "background"],
      [{ background: "A harbour town where the tide\u007f never comes back." }, "background"],
      [{ background: "A harbour town where the tide\u009b2J never comes back." }, "background"],
      [{ style_rules: "Short\u0008 sentences." }, "style_rules"],
    ];
    for (const [patch, field] of cases) {
      const err = expectError(await call("/stories", { token: human.token, body: storyInput(patch) }), 400, "VALIDATION_ERROR");
      expect(err.details.fields, JSON.stringify(patch)).toEqual([{ field, issue: expect.stringMatching(/control characters/) }]);
    }
    const lines = await call("/stories", {
      token: human.token,
      body: storyInput({ background: "A harbour town.\nThe tide\r\nnever comes back.", style_rules: "\tShort sentences.\nNo adverbs.", title: "Tide\tline" }),
    });
    expect(lines.status, lines.text).toBe(201);
    expect(lines.body.data).toMatchObject({ background: "A harbour town.\nThe tide\r\nnever comes back.", style_rules: "\tShort sentences.\nNo adverbs." });
  });

  it("refuses an initial segment of the wrong length with 422 naming its index, writing nothing", async () => {
    const human = await registerHuman();
    const title = unique("Broken ");
    const short = await call("/stories", { token: human.token, body: storyInput({ title, initial_segments: [words(5), words(2), words(5)] }) });
    const err = expectError(short, 422, "SEGMENT_TOO_SHORT");
    expect(err.details).toMatchObject({ index: 1, current_length: 2, min_length: 3, suggestion: expect.any(String) });
    const long = await call("/stories", { token: human.token, body: storyInput({ title, initial_segments: [words(5), words(5), words(51)] }) });
    expect(expectError(long, 422, "SEGMENT_TOO_LONG").details).toMatchObject({ index: 2, current_length: 51, max_length: 50 });
    const counts = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM stories WHERE title = ?1) AS s, (SELECT count(*) FROM branches b JOIN stories s ON s.id = b.story_id WHERE s.title = ?1) AS b",
    )
      .bind(title)
      .first<{ s: number; b: number }>();
    expect(counts).toEqual({ s: 0, b: 0 });
  });

  it("exempts the starter from the length rules", async () => {
    const human = await registerHuman();
    await createStory(human.token, { starter: "Hi." });
    await createStory(human.token, { starter: words(500) });
  });
});

describe("GET /stories", () => {
  it("lists newest first with defaults, counts and a shortened background", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const a = await createStory(human.token, { background: "B".repeat(300) });
    const b = await createStory(human.token);
    await call(`/branches/${b.main_branch_id}/join`, { token: bot.token, body: {} });
    const res = await call("/stories");
    expect(res.status).toBe(200);
    const { stories, count, pagination } = res.body.data;
    expect(pagination).toMatchObject({ limit: 20, offset: 0, total: count });
    expect(count).toBeGreaterThanOrEqual(2);
    const ids = stories.map((s: any) => s.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    const itemA = stories.find((s: any) => s.id === a.id);
    expect(itemA.background).toHaveLength(200);
    // The spec's fields, and what a story is.
    expect(Object.keys(itemA)).toEqual([
      "id",
      "title",
      "background",
      "language",
      "owner_type",
      "status",
      "branches_count",
      "bots_count",
      "created_at",
      "tags",
      "rating",
      "warnings",
      "authorship",
      "bot_share",
    ]);
    expect(stories.find((s: any) => s.id === b.id)).toMatchObject({ branches_count: 1, bots_count: 1 });
  });

  it("paginates with limit/offset, caps limit at 100 and refuses bad values", async () => {
    const human = await registerHuman();
    for (let i = 0; i < 3; i++) await createStory(human.token);
    const all = (await call("/stories?limit=100")).body.data;
    const page = (await call("/stories?limit=2&offset=1")).body.data;
    expect(page.stories.map((s: any) => s.id)).toEqual(all.stories.slice(1, 3).map((s: any) => s.id));
    expect(page.pagination).toEqual({ limit: 2, offset: 1, total: all.count, has_more: all.count > 3 });
    expect((await call("/stories?limit=1000")).body.data.pagination.limit).toBe(100);
    for (const q of ["limit=0", "limit=-1", "offset=-1", "limit=abc", "limit=1.5", "status=deleted"]) {
      expectError(await call(`/stories?${q}`), 400, "VALIDATION_ERROR");
    }
  });

  it("status=archived lists archived stories, which the default list leaves out", async () => {
    const human = await registerHuman();
    const s = await createStory(human.token);
    await call(`/stories/${s.id}`, { method: "PATCH", token: human.token, body: { status: "archived" } });
    const archived = (await call("/stories?status=archived&limit=100")).body.data.stories.map((x: any) => x.id);
    const active = (await call("/stories?limit=100")).body.data.stories.map((x: any) => x.id);
    expect(archived).toContain(s.id);
    expect(active).not.toContain(s.id);
  });
});

describe("GET and PATCH /stories/{id}", () => {
  it("returns the story, and 404 for unknown or malformed ids", async () => {
    const human = await registerHuman();
    const s = await createStory(human.token);
    const res = await call(`/stories/${s.id}`);
    expect(res.body.data).toMatchObject({ id: s.id, status: "active", updated_at: expect.any(String), owner_id: human.id });
    expectError(await call(`/stories/${crypto.randomUUID()}`), 404, "NOT_FOUND");
    expectError(await call("/stories/not-a-uuid"), 404, "NOT_FOUND");
  });

  it("the owner archives and restores it; a bad status or an empty patch is 400, an unknown story 404", async () => {
    const owner = await registerHuman();
    const s = await createStory(owner.token);
    expectError(await call(`/stories/${s.id}`, { method: "PATCH", token: owner.token, body: { status: "gone" } }), 400, "VALIDATION_ERROR");
    expectError(await call(`/stories/${s.id}`, { method: "PATCH", token: owner.token, body: {} }), 400, "VALIDATION_ERROR");
    expectError(await call(`/stories/${crypto.randomUUID()}`, { method: "PATCH", token: owner.token, body: { status: "archived" } }), 404, "NOT_FOUND");
    const res = await call(`/stories/${s.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("archived");
    const restored = await call(`/stories/${s.id}`, { method: "PATCH", token: owner.token, body: { status: "active", title: "Renamed" } });
    expect(restored.body.data).toMatchObject({ status: "active", title: "Renamed" });
  });

  it("PATCH refuses control characters other than tab and newline in title, background and style_rules, changing nothing", async () => {
    const owner = await registerHuman();
    const s = await createStory(owner.token);
    for (const [body, field] of [
      [{ title: "\u001b[31mRed" }, "title"],
      [{ background: "A long enough background\u001b[2J" }, "background"],
      [{ style_rules: "rules\u0007" }, "style_rules"],
    ] as const) {
      const err = expectError(await call(`/stories/${s.id}`, { method: "PATCH", token: owner.token, body }), 400, "VALIDATION_ERROR");
      expect(err.details.fields.map((f: any) => f.field)).toEqual([field]);
    }
    expect((await call(`/stories/${s.id}`)).body.data).toMatchObject({ title: s.title, background: s.background, style_rules: s.style_rules });
  });
});

describe("ids that name their story", () => {
  it("a story's branches, segments, comments and rewrites have ids that begin with the story's first 8 bytes", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const prefix = story.id.slice(0, 18);
    const fork = await call(`/stories/${story.id}/branches`, { token: owner.token, body: { title: "A fork" } });
    expect(fork.status).toBe(201);
    const segment = await call(`/branches/${story.main_branch_id}/segments`, { token: owner.token, body: { content: words(30) } });
    expect(segment.status).toBe(201);
    const comment = await call(`/branches/${story.main_branch_id}/comments`, { token: owner.token, body: { content: "A comment." } });
    expect(comment.status).toBe(201);
    const rewrite = await call(`/segments/${segment.body.data.id}/rewrites`, { token: owner.token, body: { content: words(30), reason: "tighter" } });
    expect(rewrite.status).toBe(201);
    const initial = await env.DB.prepare("SELECT id FROM segments WHERE story_id = ?").bind(story.id).all<{ id: string }>();
    const ids = [
      story.main_branch_id,
      fork.body.data.id,
      segment.body.data.id,
      comment.body.data.id,
      rewrite.body.data.id,
      ...initial.results.map((r) => r.id),
    ];
    expect(ids.length).toBeGreaterThan(6);
    for (const id of ids) expect(id.slice(0, 18)).toBe(prefix);
  });
});
