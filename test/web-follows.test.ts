import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DATA_TABLES, call, createBranch, createStory, registerBot, registerHuman, words } from "./helpers";
import { followOf, settled } from "./inbox";
import { recordingD1, unindexedScans } from "./recording-d1";
import { get, post, trips } from "./pages";

/**
 * Follows and the inbox on the web reader: the Follow buttons and followers on story, branch, bot and
 * writer pages, the inbox page and its forms, the unread count in every signed-in page's header (in the page's one
 * D1 round trip), and the status the inbox page's script polls.
 */

const followButton = (html: string) => /<button type="submit" aria-pressed="(true|false)" aria-label="((?:Following · Un)?[Ff]ollow [^"]*)"/.exec(html);
const followers = (html: string) => /<span class="meta follow-count">([^<]*)<\/span>/.exec(html)?.[1];

describe("Follow on the pages", () => {
  it("a story page: Follow, then Unfollow, each a form back to the page; the followers shown; signed out, a way to log in", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const reader = await registerHuman();
    const before = await get(`/stories/${story.id}`, reader.token);
    expect(followButton(before.text)?.slice(1)).toEqual(["false", "Follow this story"]);
    expect(followers(before.text)).toBe("1 follower"); // its owner, from its creation
    const followed = await post("/follows", { target_type: "story", target_id: story.id, next: `/stories/${story.id}` }, { session: reader.token });
    expect(followed.status, followed.text).toBe(303);
    expect(followed.location).toBe(`/stories/${story.id}`);
    const after = await get(`/stories/${story.id}`, reader.token);
    expect(followButton(after.text)?.slice(1)).toEqual(["true", "Following · Unfollow this story"]);
    expect(followers(after.text)).toBe("2 followers");
    const followId = /action="\/follows\/([0-9a-f-]+)\/delete"/.exec(after.text)![1];
    expect((await call("/me/follows", { token: reader.token })).body.data.follows.map((f: any) => f.id)).toEqual([followId]);
    const anonymous = await get(`/stories/${story.id}`);
    expect(followButton(anonymous.text)).toBeNull();
    expect(anonymous.text).toContain(`href="/login?next=${encodeURIComponent(`/stories/${story.id}`)}">Log in to follow</a>`);
    expect(followers(anonymous.text)).toBe("2 followers");
    const unfollowed = await post(`/follows/${followId}/delete`, { next: `/stories/${story.id}` }, { session: reader.token });
    expect(unfollowed.status).toBe(303);
    expect(followers((await get(`/stories/${story.id}`, reader.token)).text)).toBe("1 follower");
  });

  it("the forms are refused from another site (403) and without a session (to log in); an unknown target (404) and past the cap (409) are error pages", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const reader = await registerHuman();
    const fields = { target_type: "story", target_id: story.id, next: "/" };
    expect((await post("/follows", fields, { session: reader.token, origin: "https://evil.example" })).status).toBe(403);
    expect((await post("/follows", fields, { session: reader.token, origin: null })).status).toBe(403);
    const anonymous = await post("/follows", fields);
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toMatch(/^\/login\?next=/);
    expect((await post("/follows", { ...fields, target_id: crypto.randomUUID() }, { session: reader.token })).status).toBe(404);
    expect((await call("/me/follows", { token: reader.token })).body.data.follows).toEqual([]);
    // Past the cap: the error page says so, in words.
    const full = await post("/follows", fields, { session: reader.token, env: { LIMIT_FOLLOWS_PER_ACCOUNT: "0" } });
    expect(full.status).toBe(409);
    expect(full.text).toContain("the most an account may: unfollow one first");
  });

  it("a branch page, a bot's page and a writer's page each have the button and their followers", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const branch = await createBranch(owner.token, story.id);
    const bot = await registerBot();
    const reader = await registerHuman();
    await followOf(reader.token, "branch", branch.id);
    await followOf(reader.token, "author", bot.id);
    await followOf(reader.token, "author", owner.id);
    for (const [path, label] of [
      [`/branches/${branch.id}`, "Following · Unfollow this branch"],
      [`/bots/${bot.id}`, `Following · Unfollow the bot ${bot.name}`],
      [`/users/${owner.id}`, `Following · Unfollow ${owner.input.username}`],
    ]) {
      const res = await get(path, reader.token);
      expect(res.status, path).toBe(200);
      expect(followButton(res.text)?.slice(1), path).toEqual(["true", label]);
      expect(followers(res.text), path).toBe("1 follower");
    }
  });
});

describe("what following brings", () => {
  const brings = (html: string) => /<span class="meta follow-brings" id="([^"]+)">([^<]*)<\/span>/.exec(html)?.slice(1);
  const describedBy = (html: string) => /aria-label="(?:Following · Un)?[Ff]ollow [^"]*" aria-describedby="([^"]+)"/.exec(html)?.[1];

  it("each Follow button says what it brings, as its description; signed out, the way to log in says it too", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const branch = await createBranch(owner.token, story.id);
    const reader = await registerHuman();
    for (const [path, id, text] of [
      [`/stories/${story.id}`, "follow-brings-story", "new segments on its main line and new branches, in your inbox"],
      [`/branches/${branch.id}`, "follow-brings-branch", "new segments on this branch, in your inbox"],
      [`/users/${owner.id}`, "follow-brings-author", "their new stories, segments and branches, in your inbox"],
    ]) {
      const page = (await get(path, reader.token)).text;
      expect(brings(page), path).toEqual([id, text]);
      expect(describedBy(page), path).toBe(id);
      expect((await get(path)).text, path).toContain(`>Log in to follow</a>: ${text}`);
    }
  });

  it("a story's owner follows it from its creation: their page shows Following, and they may stop there", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const page = await get(`/stories/${story.id}`, owner.token);
    expect(followButton(page.text)?.slice(1)).toEqual(["true", "Following · Unfollow this story"]);
    expect(followers(page.text)).toBe("1 follower");
    const followId = /action="\/follows\/([0-9a-f-]+)\/delete"/.exec(page.text)![1];
    expect((await post(`/follows/${followId}/delete`, { next: `/stories/${story.id}` }, { session: owner.token })).status).toBe(303);
    const after = await get(`/stories/${story.id}`, owner.token);
    expect(followButton(after.text)?.slice(1)).toEqual(["false", "Follow this story"]);
    expect(followers(after.text)).toBe("0 followers");
  });
});

describe("a writer's page", () => {
  it("shows a human's name, when they joined, their stories and latest segments, never their e-mail; 404 for nobody; one round trip", async () => {
    const writer = await registerHuman();
    const story = await createStory(writer.token);
    const other = await createStory((await registerHuman()).token);
    await call(`/branches/${other.main_branch_id}/segments`, { token: writer.token, body: { content: words(4, "harbour") } });
    const res = await get(`/users/${writer.id}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<h1>${writer.input.username} <span class="badge">human</span></h1>`);
    expect(res.text).toContain(`<a href="/stories/${story.id}">${story.title}</a>`);
    expect(res.text).toContain(words(4, "harbour"));
    expect(res.text).not.toContain(writer.input.email);
    expect(trips(res)).toBe(1);
    expect((await get(`/users/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await get("/users/no%20such")).status).toBe(404);
    // Its own page shows the count, not a button; authors' names link to their pages.
    const me = await registerHuman();
    expect(followButton((await get(`/users/${me.id}`, me.token)).text)).toBeNull();
    expect((await get(`/branches/${other.main_branch_id}`)).text).toContain(`<a href="/users/${writer.id}" title="This writer&#39;s stories and segments">`);
  });
});

describe("the inbox page", () => {
  it("needs a session; lists the items in words, linked, unread ones marked; read one by one or all; the header counts the unread", async () => {
    expect((await get("/inbox")).location).toBe("/login?next=%2Finbox");
    const reader = await registerHuman();
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    await followOf(reader.token, "branch", story.main_branch_id);
    const writer = await registerBot();
    const seg = (await call(`/branches/${story.main_branch_id}/segments`, { token: writer.token, body: { content: words(4, "tide") } })).body.data;
    await settled(story.id);
    const page = await get("/inbox", reader.token);
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("private, no-cache");
    expect(page.text).toContain(
      `<a href="/branches/${story.main_branch_id}#s-${seg.id}">1 new segment on “main line” of “${story.title}” by ${writer.name}</a>`,
    );
    expect(page.text).toContain('<li class="inbox-item unread"');
    expect(page.text).toContain('<span class="badge" id="inbox-count">1</span>');
    expect(page.text).toContain('data-status="/inbox/status"');
    // The live badge says it is connecting (the script shows it at once and asks at once), never "Offline" before it tried.
    expect(page.text).toMatch(/<span id="live-status" class="badge" role="status" hidden="">Connecting…<\/span>/);
    expect(trips(page)).toBe(1);
    // Any signed-in page's header counts the unread, in that page's one round trip.
    const home = await get("/", reader.token);
    expect(home.text).toContain('<span class="badge" id="inbox-count">1</span>');
    expect(trips(home)).toBe(1);
    const itemId = /id="i-([0-9a-f-]+)"/.exec(page.text)![1];
    const read = await post("/inbox/read", { ids: itemId, next: "/inbox" }, { session: reader.token });
    expect(read.status).toBe(303);
    expect(read.location).toBe("/inbox");
    const after = await get("/inbox", reader.token);
    expect(after.text).toContain('<li class="inbox-item"');
    expect(after.text).not.toContain('id="inbox-count"');
    expect(after.text).toContain("0 unread items");
    await call(`/branches/${story.main_branch_id}/segments`, { token: writer.token, body: { content: words(4) } });
    await settled(story.id);
    const again = await get("/inbox?unread=true", reader.token);
    const upTo = /name="up_to" value="([^"]+)"/.exec(again.text)![1];
    expect((await post("/inbox/read", { up_to: upTo, next: "/inbox" }, { session: reader.token })).status).toBe(303);
    expect((await call("/me/inbox?unread=true", { token: reader.token })).body.data.items).toEqual([]);
  });

  it("/inbox/status answers the unread count and the newest activity as JSON (401 signed out)", async () => {
    const reader = await registerHuman();
    const empty = await get("/inbox/status", reader.token);
    expect(JSON.parse(empty.text)).toEqual({ unread_count: 0, latest: null });
    const owner = await registerHuman();
    await followOf(reader.token, "author", owner.id);
    const story = await createStory(owner.token);
    await settled(story.id);
    const status = JSON.parse((await get("/inbox/status", reader.token)).text);
    expect(status).toEqual({ unread_count: 1, latest: expect.any(String) });
    expect((await get("/inbox/status")).status).toBe(401);
  });
});

describe("their queries", () => {
  it("EXPLAIN QUERY PLAN: the signed-in pages' queries (inbox, follows, a writer's page, the status, the header's count) scan no growing table", async () => {
    const reader = await registerHuman();
    const owner = await registerHuman();
    await followOf(reader.token, "author", owner.id);
    const story = await createStory(owner.token);
    await settled(story.id);
    const seen = new Set<string>();
    const DB = recordingD1(env.DB, (q) => seen.add(q));
    for (const path of ["/inbox", "/inbox?unread=true&page=2", "/follows", `/users/${owner.id}`, "/inbox/status", `/stories/${story.id}`]) {
      expect((await get(path, { session: reader.token, env: { DB } })).status, path).toBe(200);
    }
    expect([...seen].some((q) => q.includes("FROM inbox_items i JOIN stories st"))).toBe(true);
    expect(await unindexedScans(env.DB, seen, DATA_TABLES)).toEqual([]);
  });
});
