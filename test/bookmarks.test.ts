import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../src/env";
import {
  DATA_TABLES,
  apiTokenOf,
  call,
  createBranch,
  expectError,
  join,
  registerBot,
  registerHuman,
  storyWithSegments,
  submit,
  withBindings,
  words,
} from "./helpers";
import { closeClients, hide, mcpClient, mcpTool, moderator, restore } from "./moderation";
import { callTool, connectedApp, toolResult } from "./oauth-flow";
import { get, post, shown, trips, visible } from "./pages";
import { recordingD1, unindexedScans } from "./recording-d1";

/**
 * Bookmarks (`/me/bookmarks`) and reading progress (`/me/progress`), over the API, the web reader (the
 * Bookmark buttons, the Bookmarks page, the kept place and "Continue reading" on the home page) and MCP.
 */

afterEach(closeClients);

const bookmark = (token: string, body: unknown, bindings?: Partial<Env>) => call("/me/bookmarks", { token, body, env: bindings });
const keep = (token: string, branchId: string, segmentId: string) =>
  call(`/me/progress/${branchId}`, { method: "PUT", token, body: { segment_id: segmentId } });
const progressOf = async (token: string) => (await call("/me/progress", { token })).body.data.progress as any[];
const placeOn = async (token: string, branchId: string) => (await progressOf(token)).find((p) => p.branch_id === branchId);
/** Lets the clock move on, so two writes in a row never share a millisecond (lists order by time, newest first). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

// ---- the web reader, as a browser sends it ----

/** A story whose main line has 4 segments (the starter and three), read by a human; a bot to write on it. */
async function scene() {
  const { owner, story, segments } = await storyWithSegments();
  const reader = await registerHuman();
  return { owner, story, segments, reader, main: story.main_branch_id as string };
}

describe("bookmarks: POST, GET, DELETE /me/bookmarks", () => {
  it("bookmarks a segment (201), with its story, branch, place and excerpt; a repeat is the same bookmark (200), its note replaced only when sent", async () => {
    const { story, segments, reader, main } = await scene();
    const first = await bookmark(reader.token, { segment_id: segments[2].id, note: "  the cracked glass  " });
    expect(first.status, first.text).toBe(201);
    expect(first.body.data).toMatchObject({
      segment_id: segments[2].id,
      note: "the cracked glass",
      story_id: story.id,
      story_title: story.title,
      branch_id: main,
      branch_title: "main line",
      sequence_order: 3,
      author_name: segments[2].author_name,
      language: "en",
      excerpt: segments[2].content,
      hidden: false,
    });
    const id = first.body.data.id;
    // Again without a note: the same bookmark, the note kept; with one: replaced; "" removes it.
    const again = await bookmark(reader.token, { segment_id: segments[2].id.toUpperCase() });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ id, note: "the cracked glass", created_at: first.body.data.created_at, updated_at: first.body.data.updated_at });
    expect((await bookmark(reader.token, { segment_id: segments[2].id, note: "the oil tins" })).body.data).toMatchObject({ id, note: "the oil tins" });
    expect((await bookmark(reader.token, { segment_id: segments[2].id, note: " " })).body.data).toMatchObject({ id, note: null });
    const count = await env.DB.prepare("SELECT count(*) AS n FROM bookmarks WHERE account_id = ?").bind(reader.id).first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it("lists the caller's own bookmarks newest first, a page at a time; removes them (another's, or one removed, is 404)", async () => {
    const { segments, reader } = await scene();
    const other = await registerHuman();
    const ids: string[] = [];
    for (const s of segments) {
      ids.push((await bookmark(reader.token, { segment_id: s.id })).body.data.id);
      await tick();
    }
    const theirs = (await bookmark(other.token, { segment_id: segments[0].id })).body.data.id;
    const page = await call("/me/bookmarks?limit=3", { token: reader.token });
    expect(page.status).toBe(200);
    expect(page.body.data.bookmarks.map((b: any) => b.id)).toEqual(ids.slice().reverse().slice(0, 3));
    expect(page.body.data.pagination).toEqual({ limit: 3, offset: 0, total: 4, has_more: true });
    expect((await call("/me/bookmarks?offset=3", { token: reader.token })).body.data.bookmarks.map((b: any) => b.id)).toEqual([ids[0]]);
    expectError(await call("/me/bookmarks?limit=0", { token: reader.token }), 400, "VALIDATION_ERROR");
    // Another account's bookmark is not the caller's to see or remove: 404, and it stays.
    expectError(await call(`/me/bookmarks/${theirs}`, { method: "DELETE", token: reader.token }), 404, "NOT_FOUND");
    expect((await call("/me/bookmarks", { token: other.token })).body.data.bookmarks.map((b: any) => b.id)).toEqual([theirs]);
    const removed = await call(`/me/bookmarks/${ids[1]}`, { method: "DELETE", token: reader.token });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ id: ids[1], deleted: true });
    expectError(await call(`/me/bookmarks/${ids[1]}`, { method: "DELETE", token: reader.token }), 404, "NOT_FOUND");
    expectError(await call("/me/bookmarks/not-an-id", { method: "DELETE", token: reader.token }), 404, "NOT_FOUND");
    expect((await call("/me/bookmarks", { token: reader.token })).body.data.pagination.total).toBe(3);
  });

  it("any signed-in account may bookmark: a bot's key and JWT, a person's API token", async () => {
    const { segments } = await scene();
    const bot = await registerBot();
    const person = await registerHuman();
    for (const token of [bot.apiKey, bot.token, await apiTokenOf(person)])
      expect((await bookmark(token, { segment_id: segments[1].id })).status).toBeLessThan(202);
    expect((await call("/me/bookmarks", { token: bot.apiKey })).body.data.pagination.total).toBe(1);
  });

  it("bad input is 400 naming the field: no segment_id, a note too long, with a control or format character, or not text; an unknown or malformed segment is 404", async () => {
    const { segments, reader } = await scene();
    const cases: [unknown, string][] = [
      [{}, "segment_id"],
      [{ segment_id: segments[1].id, note: "x".repeat(1001) }, "note"],
      [{ segment_id: segments[1].id, note: "ring \u0007 the bell" }, "note"],
      [{ segment_id: segments[1].id, note: "a\u202ehidden" }, "note"],
      [{ segment_id: segments[1].id, note: "zero\u200bwidth" }, "note"],
      [{ segment_id: segments[1].id, note: 5 }, "note"],
      [{ segment_id: 5 }, "segment_id"],
    ];
    for (const [body, field] of cases) {
      const error = expectError(await bookmark(reader.token, body), 400, "VALIDATION_ERROR");
      expect(
        error.details.fields.map((f: any) => f.field),
        JSON.stringify(body),
      ).toEqual([field]);
      expect(error.message).toContain(field);
    }
    expect((await bookmark(reader.token, { segment_id: segments[1].id, note: "two lines\nand a\ttab" })).status).toBe(201);
    expectError(await bookmark(reader.token, { segment_id: crypto.randomUUID() }), 404, "NOT_FOUND");
    expectError(await bookmark(reader.token, { segment_id: "nope" }), 404, "NOT_FOUND");
    expectError(await call("/me/bookmarks", { body: { segment_id: segments[1].id } }), 401, "UNAUTHORIZED");
  });

  it("at most LIMIT_BOOKMARKS_PER_ACCOUNT per account: 409 CONFLICT beyond, counted in the write so concurrent ones cannot pass it; a repeat still answers", async () => {
    const { owner, story, segments } = await scene();
    for (const text of [words(4, "x"), words(4, "y")]) await submit(owner.token, story.main_branch_id, text);
    const all = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments as any[];
    expect(all).toHaveLength(6);
    const reader = await registerHuman();
    await withBindings({ LIMIT_BOOKMARKS_PER_ACCOUNT: "3" }, async () => {
      const results = await Promise.all(all.map((s) => bookmark(reader.token, { segment_id: s.id })));
      expect(results.filter((r) => r.status === 201)).toHaveLength(3);
      for (const refused of results.filter((r) => r.status !== 201)) {
        const error = expectError(refused, 409, "CONFLICT");
        expect(error.details).toEqual({ limit: 3, bookmarks: 3 });
      }
      // A bookmark already kept is answered at the cap, its note replaced.
      const kept = results.find((r) => r.status === 201)!.body.data;
      const repeat = await bookmark(reader.token, { segment_id: kept.segment_id, note: "still here" });
      expect(repeat.status).toBe(200);
      expect(repeat.body.data).toMatchObject({ id: kept.id, note: "still here" });
      // Removing one frees a place.
      expect((await call(`/me/bookmarks/${kept.id}`, { method: "DELETE", token: reader.token })).status).toBe(200);
      expect((await bookmark(reader.token, { segment_id: segments[0].id })).status).toBe(201);
    });
    expect((await call("/me/bookmarks", { token: reader.token })).body.data.pagination.total).toBe(3);
  });

  it("a hidden segment, or one of a hidden branch or story, is 404 as reading it is (its author and moderators may bookmark it)", async () => {
    const { owner, story, segments, reader } = await scene();
    const mod = await moderator();
    const fork = await createBranch(owner.token, story.id, { fork_at_segment_id: segments[1].id, initial_segment: words(4, "fork") });
    expect((await hide(mod.token, "segments", segments[2].id)).status).toBe(200);
    expectError(await bookmark(reader.token, { segment_id: segments[2].id }), 404, "NOT_FOUND");
    expect((await bookmark(owner.token, { segment_id: segments[2].id })).status).toBe(201);
    expect((await bookmark(mod.token, { segment_id: segments[2].id })).status).toBe(201);
    expect((await hide(mod.token, "branches", fork.id)).status).toBe(200);
    expectError(await bookmark(reader.token, { segment_id: fork.segment.id }), 404, "NOT_FOUND");
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    expectError(await bookmark(reader.token, { segment_id: segments[1].id }), 404, "NOT_FOUND");
  });

  it("a hide after the bookmark masks it: listed with hidden: true and no text (its author still reads it); a restore brings it back", async () => {
    const { owner, story, segments, reader } = await scene();
    const mod = await moderator();
    const secret = "a secret line nobody else should read";
    const written = await submit(owner.token, story.main_branch_id, `${secret} ${words(3)}`);
    const segmentId = written.body.data.id;
    const fork = await createBranch(owner.token, story.id, { fork_at_segment_id: segments[1].id, initial_segment: words(4, "fork") });
    for (const token of [reader.token, owner.token]) expect((await bookmark(token, { segment_id: segmentId, note: "mine" })).status).toBe(201);
    await tick();
    expect((await bookmark(reader.token, { segment_id: fork.segment.id })).status).toBe(201);
    await hide(mod.token, "segments", segmentId);
    await hide(mod.token, "branches", fork.id);
    const list = await call("/me/bookmarks", { token: reader.token });
    expect(list.status, list.text).toBe(200);
    expect(list.text).not.toContain(secret);
    expect(list.text).not.toContain(fork.title);
    const [onFork, onMain] = list.body.data.bookmarks;
    expect(onMain).toMatchObject({ segment_id: segmentId, hidden: true, excerpt: "", note: "mine", story_title: story.title, branch_title: "main line" });
    expect(onFork).toMatchObject({ segment_id: fork.segment.id, hidden: true, excerpt: "", branch_title: "", story_title: story.title });
    // The author reads their own hidden text, marked hidden; a repeat of the reader's bookmark is now 404, as its read.
    expect((await call("/me/bookmarks", { token: owner.token })).body.data.bookmarks[0]).toMatchObject({
      hidden: true,
      excerpt: expect.stringContaining(secret),
    });
    expectError(await bookmark(reader.token, { segment_id: segmentId }), 404, "NOT_FOUND");
    await restore(mod.token, "segments", segmentId);
    expect((await call("/me/bookmarks", { token: reader.token })).body.data.bookmarks[1]).toMatchObject({
      hidden: false,
      excerpt: expect.stringContaining(secret),
    });
  });

  it("the excerpt is the segment's first 200 characters, cut with …", async () => {
    const { owner, story, reader } = await scene();
    const long = words(40, "longword");
    const seg = await submit(owner.token, story.main_branch_id, long);
    const b = (await bookmark(reader.token, { segment_id: seg.body.data.id })).body.data;
    expect(b.excerpt).toBe(`${[...long].slice(0, 200).join("").trimEnd()}…`);
  });
});

describe("reading progress: PUT, GET, DELETE /me/progress", () => {
  it("keeps a place on a path; segments added after it move as a bot writes on the branch", async () => {
    const { owner, story, segments, reader, main } = await scene();
    const kept = await keep(reader.token, main, segments[3].id);
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.data).toMatchObject({
      branch_id: main,
      branch_title: "main line",
      is_main: true,
      story_id: story.id,
      story_title: story.title,
      language: "en",
      segment_id: segments[3].id,
      sequence_order: 4,
      last_sequence_order: 4,
      segments_since: 0,
    });
    const bot = await registerBot();
    expect((await join(bot.token, main)).status).toBe(201);
    expect((await submit(bot.token, main, words(5, "bot"))).status).toBe(201);
    expect(await placeOn(reader.token, main)).toMatchObject({ sequence_order: 4, last_sequence_order: 5, segments_since: 1 });
    expect((await submit(owner.token, main, words(5, "human"))).status).toBe(201);
    expect(await placeOn(reader.token, main)).toMatchObject({ segments_since: 2 });
    // The place is where the reader says: back as well as forward.
    expect((await keep(reader.token, main, segments[1].id)).body.data).toMatchObject({ sequence_order: 2, segments_since: 4 });
  });

  it("on a fork, the place may be an ancestor's segment up to the fork; the ancestor growing after the fork never counts", async () => {
    const { owner, story, segments, reader, main } = await scene();
    const fork = await createBranch(owner.token, story.id, { fork_at_segment_id: segments[1].id, initial_segment: words(4, "fork") });
    expect((await keep(reader.token, fork.id, segments[0].id)).body.data).toMatchObject({ sequence_order: 1, last_sequence_order: 3, segments_since: 2 });
    expect((await submit(owner.token, main, words(4, "later"))).status).toBe(201);
    expect(await placeOn(reader.token, fork.id)).toMatchObject({ last_sequence_order: 3, segments_since: 2 });
    expect((await submit(owner.token, fork.id, words(4, "more"))).status).toBe(201);
    expect(await placeOn(reader.token, fork.id)).toMatchObject({ last_sequence_order: 4, segments_since: 3 });
    // Off the path: the main line past the fork, another story's segment, nothing at all: 400 naming segment_id.
    const elsewhere = await storyWithSegments();
    for (const segmentId of [segments[2].id, elsewhere.segments[0].id, crypto.randomUUID(), "nope"]) {
      const error = expectError(await keep(reader.token, fork.id, segmentId), 400, "VALIDATION_ERROR");
      expect(error.details.fields).toEqual([{ field: "segment_id", issue: "is not a segment of this branch's reading path" }]);
    }
    const missing = expectError(await call(`/me/progress/${fork.id}`, { method: "PUT", token: reader.token, body: {} }), 400, "VALIDATION_ERROR");
    expect(missing.details.fields[0].field).toBe("segment_id");
    expectError(await keep(reader.token, crypto.randomUUID(), segments[0].id), 404, "NOT_FOUND");
    expectError(await keep(reader.token, "nope", segments[0].id), 404, "NOT_FOUND");
  });

  it("lists the caller's places most recently kept first, leaves hidden branches out (404 to keep there), and forgets one", async () => {
    const { owner, story, segments, reader, main } = await scene();
    const other = await registerHuman();
    const mod = await moderator();
    const fork = await createBranch(owner.token, story.id, { fork_at_segment_id: segments[1].id, initial_segment: words(4, "fork") });
    await keep(reader.token, fork.id, segments[1].id);
    await tick();
    await keep(reader.token, main, segments[0].id);
    await keep(other.token, main, segments[2].id);
    const list = await call("/me/progress", { token: reader.token });
    expect(list.body.data.progress.map((p: any) => p.branch_id)).toEqual([main, fork.id]);
    expect(list.body.data.pagination).toEqual({ limit: 20, offset: 0, total: 2, has_more: false });
    await tick();
    await keep(reader.token, fork.id, fork.segment.id);
    expect((await progressOf(reader.token)).map((p) => p.branch_id)).toEqual([fork.id, main]);
    await hide(mod.token, "branches", fork.id);
    expect((await call("/me/progress", { token: reader.token })).body.data).toMatchObject({ progress: [{ branch_id: main }], pagination: { total: 1 } });
    expectError(await keep(reader.token, fork.id, segments[0].id), 404, "NOT_FOUND");
    await restore(mod.token, "branches", fork.id);
    expect((await progressOf(reader.token)).map((p) => p.branch_id)).toEqual([fork.id, main]);
    const forgotten = await call(`/me/progress/${main}`, { method: "DELETE", token: reader.token });
    expect(forgotten.body.data).toEqual({ branch_id: main, deleted: true });
    expectError(await call(`/me/progress/${main}`, { method: "DELETE", token: reader.token }), 404, "NOT_FOUND");
    expect(await placeOn(other.token, main)).toMatchObject({ sequence_order: 3 });
  });
});

describe("the web reader", () => {
  it("the path page offers a signed-in reader a Bookmark under each segment and Keep my place; the form bookmarks and comes back; one round trip", async () => {
    const { segments, reader, main } = await scene();
    const anonymous = await get(`/branches/${main}/read`);
    expect(shown(anonymous)).not.toContain("Bookmark");
    expect(anonymous.text).not.toContain("data-place");
    const before = await get(`/branches/${main}/read`, reader.token);
    expect(before.status).toBe(200);
    expect(trips(before)).toBe(1);
    expect(before.text).toContain(`aria-label="Bookmark segment #3"`);
    expect(before.text).toContain(`data-place="/branches/${main}/place" data-place-at="0"`);
    expect(before.text).toContain('<script type="module" src="/reader/reader.js">');
    expect(visible(before.text)).toContain("Keep my place at #4");
    const sent = await post(`/me/bookmarks?next=${encodeURIComponent(`/branches/${main}/read#s-3`)}`, { segment_id: segments[2].id }, reader.token);
    expect(sent.status, sent.text.slice(0, 300)).toBe(303);
    expect(sent.location).toBe(`/branches/${main}/read#s-3`);
    const [mine] = (await call("/me/bookmarks", { token: reader.token })).body.data.bookmarks;
    expect(mine.segment_id).toBe(segments[2].id);
    const kept = await post(`/branches/${main}/place?next=${encodeURIComponent(`/branches/${main}/read#s-4`)}`, { segment_id: segments[3].id }, reader.token);
    expect([kept.status, kept.location]).toEqual([303, `/branches/${main}/read#s-4`]);
    const after = await get(`/branches/${main}/read`, reader.token);
    expect(trips(after)).toBe(1);
    expect(after.text).toContain(`href="/me/bookmarks#b-${mine.id}"`);
    expect(after.text).not.toContain(`aria-label="Bookmark segment #3"`);
    expect(after.text).toContain('data-place-at="4"');
    expect(visible(after.text)).toContain("Your place is kept here, at #4.");
    expect(after.text).toContain('<span class="badge place">your place</span>');
  });

  it("the script's beacon keeps the place (204, no page); a foreign Origin is refused; without a session the forms send one to log in", async () => {
    const { segments, reader, main } = await scene();
    const beacon = await post(`/branches/${main}/place`, { segment_id: segments[2].id, from: "script" }, reader.token);
    expect([beacon.status, beacon.text]).toEqual([204, ""]);
    expect(await placeOn(reader.token, main)).toMatchObject({ sequence_order: 3 });
    expect(
      (await post(`/branches/${main}/place`, { segment_id: segments[3].id, from: "script" }, { session: reader.token, origin: "https://evil.example" })).status,
    ).toBe(403);
    expect((await post("/me/bookmarks", { segment_id: segments[3].id }, { session: reader.token, origin: "https://evil.example" })).status).toBe(403);
    expect(await placeOn(reader.token, main)).toMatchObject({ sequence_order: 3 });
    expect((await call("/me/bookmarks", { token: reader.token })).body.data.bookmarks).toEqual([]);
    const anonymous = await post("/me/bookmarks", { segment_id: segments[3].id });
    expect([anonymous.status, anonymous.location]).toEqual([303, "/login?next=%2Fme%2Fbookmarks"]);
    expect((await get("/me/bookmarks")).location).toBe("/login?next=%2Fme%2Fbookmarks");
  });

  it("the branch page has the same marks, in its one round trip", async () => {
    const { segments, reader, main } = await scene();
    await call("/me/bookmarks", { token: reader.token, body: { segment_id: segments[1].id } });
    await keep(reader.token, main, segments[2].id);
    const res = await get(`/branches/${main}`, reader.token);
    expect(trips(res)).toBe(1);
    expect(res.text).toContain(`data-segment="${segments[0].id}" data-sequence="1"`);
    expect(res.text).toContain('data-place-at="3"');
    expect(res.text).toContain(`aria-label="Bookmark segment #1"`);
    expect(res.text).not.toContain(`aria-label="Bookmark segment #2"`);
    expect(visible(res.text)).toContain("Keep my place at #4");
    expect(shown(await get(`/branches/${main}`))).not.toContain("Keep my place");
  });

  it("the Bookmarks page lists them with their notes; a note is saved, a bad one shown in words in its form, a bookmark removed", async () => {
    const { story, segments, reader, main } = await scene();
    const made = (await call("/me/bookmarks", { token: reader.token, body: { segment_id: segments[1].id, note: "first note" } })).body.data;
    const page = await get("/me/bookmarks", reader.token);
    expect(page.status).toBe(200);
    expect(trips(page)).toBe(1);
    expect(page.text).toContain(`id="b-${made.id}"`);
    expect(page.text).toContain(`href="/branches/${main}/read#s-2"`);
    expect(visible(page.text)).toContain(`${story.title} · main line · #2`);
    expect(visible(page.text)).toContain("first note");
    expect(page.headers.get("cache-control")).toBe("private, no-cache");
    const saved = await post(
      `/me/bookmarks?next=${encodeURIComponent(`/me/bookmarks#b-${made.id}`)}`,
      { segment_id: segments[1].id, bookmark_id: made.id, note: "second note" },
      reader.token,
    );
    expect([saved.status, saved.location]).toEqual([303, `/me/bookmarks#b-${made.id}`]);
    expect((await call("/me/bookmarks", { token: reader.token })).body.data.bookmarks[0].note).toBe("second note");
    const refused = await post("/me/bookmarks", { segment_id: segments[1].id, bookmark_id: made.id, note: "bell \u0007" }, reader.token);
    expect(refused.status).toBe(400);
    const form = refused.text.slice(refused.text.indexOf(`id="b-${made.id}"`));
    expect(visible(/<div class="form-error" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(form)?.[1] ?? "")).toContain("Note:");
    const removed = await post(`/me/bookmarks/${made.id}/delete`, {}, reader.token);
    expect([removed.status, removed.location]).toEqual([303, "/me/bookmarks"]);
    expect(visible((await get("/me/bookmarks", reader.token)).text)).toContain("No bookmarks yet.");
    // Removed again (another tab): the error at the top of the page.
    const again = await post(`/me/bookmarks/${made.id}/delete`, {}, reader.token);
    expect(again.status).toBe(404);
    expect(visible(again.text)).toContain("Bookmark not found");
  });

  it('the home page offers "Continue reading" to a signed-in reader: most recent first, at their place, with what was added since; Forget; one round trip', async () => {
    const { owner, story, segments, reader, main } = await scene();
    const fork = await createBranch(owner.token, story.id, {
      title: "The Keeper's Daughter",
      fork_at_segment_id: segments[1].id,
      initial_segment: words(4, "fork"),
    });
    await keep(reader.token, main, segments[1].id);
    await tick();
    await keep(reader.token, fork.id, fork.segment.id);
    const bot = await registerBot();
    await join(bot.token, main);
    await submit(bot.token, main, words(4, "bot"));
    const home = await get("/", reader.token);
    expect(trips(home)).toBe(1);
    const section = /<section aria-labelledby="continue-reading"[\s\S]*?<\/section>/.exec(home.text)?.[0] ?? "";
    expect(visible(section)).toContain("Continue reading");
    expect(section.indexOf(fork.id)).toBeLessThan(section.indexOf(`/branches/${main}/read`));
    expect(section).toContain(`href="/branches/${fork.id}/read#s-3"`);
    expect(section).toContain(`href="/branches/${main}/read#s-2"`);
    expect(visible(section)).toContain(`${story.title}: The Keeper's Daughter · at #3 of 3 · up to date`);
    expect(visible(section)).toContain(`${story.title} · at #2 of 5 · 3 segments after your place`);
    // Not for anyone else, not on a later page, not for a hidden branch.
    expect(shown(await get("/"))).not.toContain("continue-reading");
    expect(shown(await get("/?page=2", reader.token))).not.toContain("continue-reading");
    const forgot = await post(`/branches/${fork.id}/place/delete`, {}, reader.token);
    expect([forgot.status, forgot.location]).toEqual([303, "/"]);
    expect((await post(`/branches/${fork.id}/place/delete`, {}, reader.token)).status).toBe(303);
    const left = /<section aria-labelledby="continue-reading"[\s\S]*?<\/section>/.exec((await get("/", reader.token)).text)?.[0] ?? "";
    expect(left).not.toContain(fork.id);
    expect(left).toContain(main);
    const mod = await moderator();
    await hide(mod.token, "stories", story.id);
    expect(shown(await get("/", reader.token))).not.toContain("continue-reading");
    // The header links to the Bookmarks page for a signed-in reader.
    expect(home.text).toContain('<a href="/me/bookmarks">Bookmarks</a>');
  });

  it("every new statement walks an index", async () => {
    const { owner, story, segments, reader, main } = await scene();
    const fork = await createBranch(owner.token, story.id, { fork_at_segment_id: segments[1].id, initial_segment: words(4, "fork") });
    const seen = new Set<string>();
    const DB = recordingD1(env.DB, (q) => seen.add(q));
    await withBindings({ DB }, async () => {
      const made = (await bookmark(reader.token, { segment_id: segments[1].id, note: "n" })).body.data;
      await bookmark(reader.token, { segment_id: segments[1].id });
      await call("/me/bookmarks", { token: reader.token });
      await keep(reader.token, fork.id, segments[0].id);
      await call("/me/progress", { token: reader.token });
      await call(`/me/progress/${fork.id}`, { method: "DELETE", token: reader.token });
      await call(`/me/bookmarks/${made.id}`, { method: "DELETE", token: reader.token });
    });
    await keep(reader.token, main, segments[0].id);
    for (const path of ["/", `/branches/${main}`, `/branches/${fork.id}/read`, "/me/bookmarks"])
      expect((await get(path, { session: reader.token, env: { DB } })).status, path).toBe(200);
    expect([...seen].some((q) => q.includes("reading_progress"))).toBe(true);
    expect([...seen].some((q) => q.includes("INSERT INTO bookmarks"))).toBe(true);
    expect(await unindexedScans(env.DB, seen, DATA_TABLES)).toEqual([]);
  });
});

describe("MCP", () => {
  it("bookmark_segment, list_bookmarks and remove_bookmark work for a bot as the API does; list_bookmarks is a read (the read scope), the others writes", async () => {
    const { segments } = await scene();
    const bot = await registerBot();
    const listed = (await (await mcpClient(bot.apiKey)).listTools()).tools;
    const hint = (name: string) => listed.find((t) => t.name === name)?.annotations?.readOnlyHint;
    expect([hint("list_bookmarks"), hint("bookmark_segment"), hint("remove_bookmark")]).toEqual([true, false, false]);
    const made = (await mcpTool("bookmark_segment", { segment_id: segments[2].id, note: "pick up here" }, bot.apiKey)).result;
    expect(made.isError ?? false).toBe(false);
    expect(made.structuredContent).toMatchObject({ segment_id: segments[2].id, note: "pick up here", sequence_order: 3 });
    expect(made.content[0].text).toContain("Bookmarked");
    const again = (await mcpTool("bookmark_segment", { segment_id: segments[2].id }, bot.apiKey)).result;
    expect(again.content[0].text).toContain("Already bookmarked");
    const list = (await mcpTool("list_bookmarks", {}, bot.apiKey)).result;
    expect(list.structuredContent.bookmarks.map((b: any) => [b.id, b.note])).toEqual([[made.structuredContent.id, "pick up here"]]);
    expect(list.content[0].text).toContain("pick up here");
    const bad = (await mcpTool("bookmark_segment", { segment_id: segments[2].id, note: "\u0007" }, bot.apiKey)).result;
    expect(bad.structuredContent.error).toMatchObject({ code: "VALIDATION_ERROR", details: { fields: [{ field: "note" }] } });
    expect((await mcpTool("bookmark_segment", { segment_id: crypto.randomUUID() }, bot.apiKey)).result.structuredContent.error.code).toBe("NOT_FOUND");
    expect((await mcpTool("remove_bookmark", { bookmark_id: made.structuredContent.id }, bot.apiKey)).result.structuredContent).toEqual({
      id: made.structuredContent.id,
      deleted: true,
    });
    expect((await mcpTool("remove_bookmark", { bookmark_id: made.structuredContent.id }, bot.apiKey)).result.structuredContent.error.code).toBe("NOT_FOUND");
    expect((await call("/me/bookmarks", { token: bot.token })).body.data.bookmarks).toEqual([]);
  });
});

describe("MCP through OAuth", () => {
  it("a read-only grant lists its account's bookmarks; bookmarking through it is 403 insufficient_scope, nothing written", async () => {
    const { segments } = await scene();
    const person = await registerHuman();
    await bookmark(person.token, { segment_id: segments[0].id });
    const app = await connectedApp(person.token, { write: "0" });
    const listed = await toolResult(await callTool(app.access_token, "list_bookmarks"));
    expect(listed.result.structuredContent.bookmarks.map((b: any) => b.segment_id)).toEqual([segments[0].id]);
    const refused = await callTool(app.access_token, "bookmark_segment", { segment_id: segments[1].id });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    expect((await call("/me/bookmarks", { token: person.token })).body.data.pagination.total).toBe(1);
  });
});
