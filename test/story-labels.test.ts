import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import {
  call,
  createBranch,
  createStory,
  expectError,
  join,
  registerAdmin,
  registerBot,
  registerHuman,
  storyInput,
  submit,
  unique,
  vote,
  words,
} from "./helpers";
import { closeClients, hide, mcpTool, moderator } from "./moderation";

// What a story is (tags, a rating, warnings) and who wrote it (authorship), on every record and list
// item, filtered and sorted by `GET /stories`, with tag suggestions and a reader's preferences.

afterEach(closeClients);

const ids = (res: { body: any }) => res.body.data.stories.map((s: any) => s.id);
const list = (query: string) => call(`/stories?limit=100&${query}`);
/** The story's counters as D1 holds them, and what its segments say they should be. */
async function counted(storyId: string) {
  const row = await env.DB.prepare(
    `SELECT s.segments_count, s.bot_segments_count, (SELECT count(*) FROM segments g WHERE g.story_id = s.id) AS segments,
      (SELECT count(*) FROM segments g WHERE g.story_id = s.id AND g.author_type = 'bot') AS by_bots FROM stories s WHERE s.id = ?`,
  )
    .bind(storyId)
    .first<{ segments_count: number; bot_segments_count: number; segments: number; by_bots: number }>();
  return row!;
}

describe("tags, rating and warnings on a story", () => {
  it("are set at creation: tags normalized and deduplicated (the first spelling kept), warnings in the list's order; every record and list item shows them", async () => {
    const owner = await registerHuman();
    const tag = unique("Tide");
    const res = await call("/stories", {
      token: owner.token,
      body: storyInput({
        tags: [`  ${tag}  `, "Slow   Burn", tag.toUpperCase(), "ｓｌｏｗ ｂｕｒｎ", "灯塔"],
        rating: "teen",
        warnings: ["death", "violence", "death"],
      }),
    });
    expect(res.status, res.text).toBe(201);
    const labels = { tags: [tag, "Slow Burn", "灯塔"], rating: "teen", warnings: ["violence", "death"], authorship: "human", bot_share: 0 };
    expect(res.body.data).toMatchObject(labels);
    expect((await call(`/stories/${res.body.data.id}`)).body.data).toMatchObject(labels);
    const item = (await list(`tag=${encodeURIComponent(tag)}`)).body.data.stories;
    expect(item).toHaveLength(1);
    expect(item[0]).toMatchObject({ id: res.body.data.id, ...labels });
  });

  it("default to no tags, rated general, no warnings", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    expect(story).toMatchObject({ tags: [], rating: "general", warnings: [], authorship: "human", bot_share: 0 });
  });

  it("refuse more than 10 tags, a tag of 0 or over 50 characters, control or format characters, an unknown rating or warning: 400 naming the field, nothing written", async () => {
    const owner = await registerHuman();
    const title = unique("Refused ");
    const cases: [Record<string, unknown>, string][] = [
      [{ tags: Array.from({ length: 11 }, (_, i) => `tag${i}`) }, "tags"],
      [{ tags: ["ok", ""] }, "tags.1"],
      [{ tags: ["   "] }, "tags.0"],
      [{ tags: ["x".repeat(51)] }, "tags.0"],
      [{ tags: ["zero\u200bwidth"] }, "tags.0"],
      [{ tags: ["esc\u001b[31m"] }, "tags.0"],
      [{ tags: "fantasy" }, "tags"],
      [{ rating: "adult" }, "rating"],
      [{ warnings: ["gore"] }, "warnings.0"],
    ];
    for (const [patch, field] of cases) {
      const err = expectError(await call("/stories", { token: owner.token, body: storyInput({ title, ...patch }) }), 400, "VALIDATION_ERROR");
      expect(
        err.details.fields.map((f: any) => f.field),
        JSON.stringify(patch),
      ).toEqual([field]);
    }
    // Ten distinct tags, and duplicates beside them within ten, are fine; 50 characters once trimmed is fine.
    const ten = Array.from({ length: 10 }, (_, i) => `t${i}`);
    expect((await call("/stories", { token: owner.token, body: storyInput({ tags: ten }) })).status).toBe(201);
    expect((await call("/stories", { token: owner.token, body: storyInput({ tags: [` ${"x".repeat(50)} `] }) })).body.data.tags).toEqual(["x".repeat(50)]);
    const { results } = await env.DB.prepare("SELECT id FROM stories WHERE title = ?").bind(title).all();
    expect(results).toEqual([]);
  });

  it("PATCH by the owner or an admin replaces tags, rating and warnings; anyone else is refused and changes nothing; [] takes the tags off", async () => {
    const owner = await registerHuman();
    const other = await registerHuman();
    const admin = await registerAdmin();
    const [a, b, c] = [unique("a"), unique("b"), unique("c")];
    const story = await createStory(owner.token, { tags: [a, b] });
    const patch = (token: string, body: unknown) => call(`/stories/${story.id}`, { method: "PATCH", token, body });

    const refused = expectError(await patch(other.token, { tags: [c], rating: "mature" }), 403, "PERMISSION_DENIED");
    expect(refused.message).toMatch(/owner/);
    expect((await call(`/stories/${story.id}`)).body.data).toMatchObject({ tags: [a, b], rating: "general" });
    expect(ids(await list(`tag=${c}`))).toEqual([]);

    const changed = await patch(owner.token, { tags: [c, a.toUpperCase(), a], rating: "mature", warnings: ["abuse"] });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.data).toMatchObject({ tags: [c, a.toUpperCase()], rating: "mature", warnings: ["abuse"] });
    expect(ids(await list(`tag=${b}`))).toEqual([]);
    expect(ids(await list(`tag=${c}&tag=${a}`))).toEqual([story.id]);

    // A patch without tags keeps them; an admin may change any story.
    expect((await patch(owner.token, { title: "Renamed" })).body.data.tags).toEqual([c, a.toUpperCase()]);
    expect((await patch(admin.token, { tags: [], warnings: [] })).body.data).toMatchObject({ tags: [], warnings: [], rating: "mature" });
    expect(ids(await list(`tag=${c}`))).toEqual([]);

    expectError(await patch(owner.token, { tags: ["x".repeat(51)] }), 400, "VALIDATION_ERROR");
    expectError(await patch(owner.token, { rating: "adult" }), 400, "VALIDATION_ERROR");
    // An unknown story: 404, and no tag of it is written anywhere.
    const ghost = crypto.randomUUID();
    expectError(await call(`/stories/${ghost}`, { method: "PATCH", token: admin.token, body: { tags: [unique("ghost")] } }), 404, "NOT_FOUND");
    expect((await env.DB.prepare("SELECT count(*) AS n FROM story_tags WHERE story_id = ?").bind(ghost).first<{ n: number }>())!.n).toBe(0);
  });
});

describe("authorship: computed from the segments, never declared", () => {
  it("a human's story is human; a bot's segment makes it mixed, with its share; the counters are the rows' counts", async () => {
    const owner = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(owner.token); // 4 segments by a human
    expect(story).toMatchObject({ authorship: "human", bot_share: 0 });
    expect((await submit(bot.token, story.main_branch_id, words(4))).status).toBe(201);
    expect((await call(`/stories/${story.id}`)).body.data).toMatchObject({ authorship: "mixed", bot_share: 0.2 });
    expect((await call(`/branches/${story.main_branch_id}`)).body.data).toMatchObject({ authorship: "mixed", bot_share: 0.2 });
    for (let i = 0; i < 2; i++) expect((await submit(bot.token, story.main_branch_id, words(4))).status).toBe(201);
    expect((await call(`/stories/${story.id}`)).body.data).toMatchObject({ authorship: "mixed", bot_share: 0.429 });
    const c = await counted(story.id);
    expect([c.segments_count, c.bot_segments_count]).toEqual([c.segments, c.by_bots]);
    expect([c.segments, c.by_bots]).toEqual([7, 3]);
  });

  it("a bot's story is bot; a human's segment on it makes it mixed; a branch counts its own segments", async () => {
    const bot = await registerBot();
    const human = await registerHuman();
    const story = await createStory(bot.token);
    expect(story).toMatchObject({ authorship: "bot", bot_share: 1 });
    const fork = await createBranch(human.token, story.id, { initial_segment: words(4) });
    expect(fork).toMatchObject({ authorship: "human", bot_share: 0 });
    const botFork = await createBranch(bot.token, story.id, { initial_segment: words(4) });
    expect(botFork).toMatchObject({ authorship: "bot", bot_share: 1 });
    const empty = await createBranch((await registerBot()).token, story.id);
    expect(empty).toMatchObject({ authorship: "human", bot_share: 0 }); // nothing written yet
    expect((await call(`/stories/${story.id}`)).body.data).toMatchObject({ authorship: "mixed", bot_share: 0.833 });
    expect((await call(`/stories/${story.id}/branches?include_all=true`)).body.data.branches.find((b: any) => b.id === fork.id)).toMatchObject({
      authorship: "human",
    });
    const c = await counted(story.id);
    expect([c.segments_count, c.bot_segments_count]).toEqual([6, 5]);
    expect([c.segments, c.by_bots]).toEqual([6, 5]);
  });

  it("moves when a bot writes at its turn through the branch room, and stays when a segment is hidden (who wrote it is still true)", async () => {
    const owner = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(owner.token);
    expect((await join(bot.token, story.main_branch_id)).status).toBe(201);
    const seg = await submit(bot.token, story.main_branch_id, words(4));
    expect(seg.status, seg.text).toBe(201);
    const mod = await moderator();
    expect((await hide(mod.token, "segments", seg.body.data.id)).status).toBe(200);
    expect((await call(`/stories/${story.id}`)).body.data).toMatchObject({ authorship: "mixed", bot_share: 0.2 });
  });

  it("concurrent writers on two branches, humans and bots: the story's and each branch's counters are their rows' counts", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const fork = await createBranch(owner.token, story.id);
    const writers = [...(await Promise.all([0, 1, 2, 3, 4].map(() => registerHuman()))), ...(await Promise.all([0, 1, 2, 3, 4].map(() => registerBot())))];
    const results = await Promise.all(writers.flatMap((w, i) => [story.main_branch_id, fork.id].map((branch) => submit(w.token, branch, words(4, `c${i}`)))));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const c = await counted(story.id);
    expect([c.segments_count, c.bot_segments_count]).toEqual([24, 10]);
    expect([c.segments, c.by_bots]).toEqual([24, 10]);
    for (const [id, own] of [
      [story.main_branch_id, 14],
      [fork.id, 10],
    ] as const) {
      const b = (await call(`/branches/${id}`)).body.data;
      expect([b.segments_count, b.authorship, b.bot_share]).toEqual([own, "mixed", id === fork.id ? 0.5 : 0.357]);
    }
  });

  it("a refused segment moves nothing", async () => {
    const owner = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(owner.token);
    expectError(await submit(bot.token, story.main_branch_id, "too short"), 422, "SEGMENT_TOO_SHORT");
    await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } });
    expectError(await submit(bot.token, story.main_branch_id, words(4)), 403, "FORBIDDEN");
    const c = await counted(story.id);
    expect([c.segments_count, c.bot_segments_count]).toEqual([4, 0]);
  });
});

describe("GET /stories: filters and sorts", () => {
  /** Four stories under one fresh tag: a human's (general), a bot's (teen, tagged b too), a mixed one (mature), an untagged-b human one. */
  async function world() {
    const t = unique("w");
    const b = unique("b");
    const human = await registerHuman();
    const bot = await registerBot();
    const plain = await createStory(human.token, { tags: [t] });
    const robot = await createStory(bot.token, { tags: [t, b], rating: "teen" });
    const mixed = await createStory(human.token, { tags: [b, t], rating: "mature" });
    expect((await submit(bot.token, mixed.main_branch_id, words(4))).status).toBe(201);
    const fourth = await createStory(human.token, { tags: [t], rating: "teen" });
    return { t, b, human, bot, plain, robot, mixed, fourth };
  }

  it("tag (every one), exclude_tag (none of them), rating and authorship (any of them), and their combinations; a tag in any spelling", async () => {
    const w = await world();
    const { t, b } = w;
    const cases: [string, string[]][] = [
      [`tag=${t}`, [w.fourth.id, w.mixed.id, w.robot.id, w.plain.id]],
      [`tag=${t.toUpperCase()}`, [w.fourth.id, w.mixed.id, w.robot.id, w.plain.id]],
      [`tag=${encodeURIComponent(` ${t} `)}`, [w.fourth.id, w.mixed.id, w.robot.id, w.plain.id]],
      [`tag=${t}&tag=${b}`, [w.mixed.id, w.robot.id]],
      [`tag=${t}&tag=${b}&tag=${b.toUpperCase()}`, [w.mixed.id, w.robot.id]],
      [`tag=${t}&exclude_tag=${b}`, [w.fourth.id, w.plain.id]],
      [`tag=${t}&exclude_tag=${b}&exclude_tag=${unique("none")}`, [w.fourth.id, w.plain.id]],
      [`tag=${t}&rating=teen`, [w.fourth.id, w.robot.id]],
      [`tag=${t}&rating=teen&rating=mature`, [w.fourth.id, w.mixed.id, w.robot.id]],
      [`tag=${t}&authorship=human`, [w.fourth.id, w.plain.id]],
      [`tag=${t}&authorship=bot`, [w.robot.id]],
      [`tag=${t}&authorship=mixed&authorship=bot`, [w.mixed.id, w.robot.id]],
      [`tag=${t}&rating=teen&authorship=human`, [w.fourth.id]],
      [`tag=${t}&exclude_tag=${b}&rating=general&authorship=human`, [w.plain.id]],
      [`tag=${t}&rating=general&authorship=bot`, []],
      [`tag=${unique("nobody")}`, []],
    ];
    for (const [query, expected] of cases) {
      const res = await list(query);
      expect(res.status, `${query} ${res.text}`).toBe(200);
      expect(ids(res), query).toEqual(expected);
      expect(res.body.data.count, query).toBe(expected.length);
    }
  });

  it("sort=new (the default), active (most segments this week) and top (vote score), each tied to the newest; paginated", async () => {
    const w = await world();
    const voter = await registerHuman();
    expect((await vote(voter.token, "branch", w.plain.main_branch_id, 1)).status).toBe(201);
    for (let i = 0; i < 2; i++) expect((await submit(w.human.token, w.fourth.main_branch_id, words(4, `n${i}`))).status).toBe(201);
    expect(ids(await list(`tag=${w.t}`))).toEqual([w.fourth.id, w.mixed.id, w.robot.id, w.plain.id]);
    expect(ids(await list(`tag=${w.t}&sort=new`))).toEqual([w.fourth.id, w.mixed.id, w.robot.id, w.plain.id]);
    // fourth: 6 segments this week; mixed: 5; the other two 4 each (newest first).
    expect(ids(await list(`tag=${w.t}&sort=active`))).toEqual([w.fourth.id, w.mixed.id, w.robot.id, w.plain.id]);
    expect(ids(await list(`tag=${w.t}&sort=top`))).toEqual([w.plain.id, w.fourth.id, w.mixed.id, w.robot.id]);
    const page = (await call(`/stories?tag=${w.t}&sort=top&limit=2&offset=1`)).body.data;
    expect(page.stories.map((s: any) => s.id)).toEqual([w.fourth.id, w.mixed.id]);
    expect(page.pagination).toEqual({ limit: 2, offset: 1, total: 4, has_more: true });
  });

  it("hidden and archived stories stay out of every filter, as they do of the plain list", async () => {
    const w = await world();
    const mod = await moderator();
    expect((await hide(mod.token, "stories", w.robot.id)).status).toBe(200);
    await call(`/stories/${w.mixed.id}`, { method: "PATCH", token: w.human.token, body: { status: "archived" } });
    expect(ids(await list(`tag=${w.t}&tag=${w.b}`))).toEqual([]);
    expect(ids(await list(`tag=${w.t}&tag=${w.b}&status=archived`))).toEqual([w.mixed.id]);
  });

  it("refuses a bad filter with 400 naming it", async () => {
    const cases: [string, string][] = [
      ["rating=adult", "rating.0"],
      ["authorship=robot", "authorship.0"],
      ["sort=oldest", "sort"],
      [`tag=${"x".repeat(51)}`, "tag.0"],
      ["tag=", "tag.0"],
      [`tag=a%E2%80%8Bb`, "tag.0"],
      [Array.from({ length: 11 }, (_, i) => `tag=t${i}`).join("&"), "tag"],
      [Array.from({ length: 21 }, (_, i) => `exclude_tag=t${i}`).join("&"), "exclude_tag"],
    ];
    for (const [query, field] of cases) {
      const err = expectError(await call(`/stories?${query}`), 400, "VALIDATION_ERROR");
      expect(
        err.details.fields.map((f: any) => f.field),
        query,
      ).toContain(field);
    }
  });
});

describe("GET /tags?prefix=", () => {
  it("suggests the tags listed stories carry, by their keys' order, in their first spelling, with their counts", async () => {
    const stem = unique("sugg");
    const human = await registerHuman();
    await createStory(human.token, { tags: [`${stem}-Alpha`, `${stem} beta`] });
    await createStory(human.token, { tags: [`${stem}-alpha`] });
    const hidden = await createStory(human.token, { tags: [`${stem}-hidden`] });
    const archived = await createStory(human.token, { tags: [`${stem}-archived`, `${stem}-alpha`] });
    await call(`/stories/${archived.id}`, { method: "PATCH", token: human.token, body: { status: "archived" } });
    expect((await hide((await moderator()).token, "stories", hidden.id)).status).toBe(200);

    const res = await call(`/tags?prefix=${encodeURIComponent(stem.toUpperCase())}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.tags).toEqual([
      { name: `${stem} beta`, key: `${stem} beta`, stories_count: 1 },
      { name: `${stem}-Alpha`, key: `${stem}-alpha`, stories_count: 2 },
    ]);
    expect((await call(`/tags?prefix=${encodeURIComponent(`${stem} `)}`)).body.data.tags.map((t: any) => t.key)).toEqual([`${stem} beta`]);
    expect((await call(`/tags?prefix=${stem}&limit=1`)).body.data.tags).toHaveLength(1);
    expect((await call(`/tags?prefix=${unique("none")}`)).body.data.tags).toEqual([]);
    expect((await call("/tags")).status).toBe(200);
    expectError(await call(`/tags?prefix=${"x".repeat(51)}`), 400, "VALIDATION_ERROR");
    expectError(await call("/tags?limit=0"), 400, "VALIDATION_ERROR");
  });
});

describe("GET and PUT /me/preferences", () => {
  it("start empty and are set whole (tags as their keys, deduplicated)", async () => {
    const reader = await registerHuman();
    expect((await call("/me/preferences", { token: reader.token })).body.data).toEqual({ hide_mature: false, hidden_tags: [], updated_at: null });
    const set = await call("/me/preferences", {
      method: "PUT",
      token: reader.token,
      body: { hide_mature: true, hidden_tags: ["Gore", " gore ", "Body Horror"] },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data).toMatchObject({ hide_mature: true, hidden_tags: ["gore", "body horror"] });
    expect((await call("/me/preferences", { token: reader.token })).body.data).toEqual(set.body.data);
    const bot = await registerBot();
    expect((await call("/me/preferences", { token: bot.apiKey })).body.data.hidden_tags).toEqual([]); // one reader's are theirs
    const cleared = await call("/me/preferences", { method: "PUT", token: reader.token, body: { hide_mature: false, hidden_tags: [] } });
    expect(cleared.body.data).toMatchObject({ hide_mature: false, hidden_tags: [] });
  });

  it("refuses a missing field, more than 20 hidden tags or a bad one with 400, changing nothing", async () => {
    const reader = await registerHuman();
    await call("/me/preferences", { method: "PUT", token: reader.token, body: { hide_mature: false, hidden_tags: ["kept"] } });
    for (const body of [
      {},
      { hide_mature: true },
      { hidden_tags: [] },
      { hide_mature: false, hidden_tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
      { hide_mature: false, hidden_tags: [""] },
      { hide_mature: "yes", hidden_tags: [] },
    ]) {
      expectError(await call("/me/preferences", { method: "PUT", token: reader.token, body }), 400, "VALIDATION_ERROR");
    }
    expect((await call("/me/preferences", { token: reader.token })).body.data.hidden_tags).toEqual(["kept"]);
  });
});

describe("MCP", () => {
  it("create_story takes tags, a rating and warnings; list_stories filters and sorts as GET /stories does", async () => {
    const bot = await registerBot();
    const t = unique("mcp");
    const { result } = await mcpTool("create_story", { ...storyInput({ tags: [t, "Noir"], rating: "teen", warnings: ["violence"] }) }, bot.apiKey);
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ tags: [t, "Noir"], rating: "teen", warnings: ["violence"], authorship: "bot", bot_share: 1 });
    const other = await createStory((await registerHuman()).token, { tags: [t] });
    const listed = (await mcpTool("list_stories", { tag: [t.toUpperCase()], authorship: ["bot"], rating: ["teen"] })).result;
    expect(listed.structuredContent.stories.map((s: any) => s.id)).toEqual([result.structuredContent.id]);
    expect(listed.content[0].text).toContain(`tags: ${t}, Noir`);
    const all = (await mcpTool("list_stories", { tag: [t], sort: "new" })).result.structuredContent;
    expect(all.stories.map((s: any) => s.id)).toEqual([other.id, result.structuredContent.id]);
    const refused = (await mcpTool("list_stories", { rating: ["adult"] })).result;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.code).toBe("VALIDATION_ERROR");
  });
});
