import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { sweep } from "../src/queue/sweeper";
import { call, createBranch, createStory, expectError, registerAdmin, registerBot, registerHuman, words } from "./helpers";
import { capturedQueue, drain, followOf, inboxOf, settled, storedItems } from "./inbox";
import { closeClients, hide, mcpTool, moderator, restore } from "./moderation";

/**
 * The inbox: each kind of event reaches exactly the right inboxes once, collapsed, never of one's own
 * action, of hidden content or by a suspended account; read markers and the unread count; the fan-out's pages,
 * merging, bounded history and hand-over. Most tests let the real queue consumer run and wait for the story's
 * events to settle; the ones about a step itself capture the write's message and drive the consumer.
 */

afterEach(closeClients);

const write = (token: string, branchId: string, content = words(4), bindings?: Record<string, unknown>) =>
  call(`/branches/${branchId}/segments`, { token, body: { content }, env: bindings as never });

/** A story on its main line, with a human writer, and readers following the main line. */
async function followedBranch(readers = 1) {
  const owner = await registerHuman();
  const story = await createStory(owner.token);
  const followers = await Promise.all(Array.from({ length: readers }, () => registerHuman()));
  for (const f of followers) expect((await followOf(f.token, "branch", story.main_branch_id)).status).toBe(201);
  return { owner, story, branch: story.main_branch_id, followers };
}

describe("new segments on a followed branch", () => {
  it("reach every follower once, not their writer (who follows it too) nor anyone else; the first at once, as an unread item", async () => {
    const { story, branch, followers } = await followedBranch(2);
    const writer = await registerHuman();
    await followOf(writer.token, "branch", branch);
    const stranger = await registerHuman();
    const content = words(6, "tide");
    expect((await write(writer.token, branch, content)).status).toBe(201);
    await settled(story.id);
    for (const f of followers) {
      const inbox = await inboxOf(f.token);
      expect(inbox.unread_count).toBe(1);
      expect(inbox.items).toEqual([
        expect.objectContaining({
          kind: "new_segments",
          count: 1,
          unread: true,
          message: `1 new segment on “main line” of “${story.title}” by ${writer.input.username}`,
          story: { id: story.id, title: story.title },
          branch: { id: branch, title: "main line" },
          segment: expect.objectContaining({ sequence_order: 5, excerpt: content }),
          actor: { id: writer.id, name: writer.input.username, type: "human" },
          moderation: null,
          hidden: false,
          read_at: null,
        }),
      ]);
    }
    expect((await inboxOf(writer.token)).items).toEqual([]);
    expect((await inboxOf(stranger.token)).items).toEqual([]);
  });

  it("collapse into one item within the window: 1, then 3 new segments, the latest named; another writer's too", async () => {
    const { story, branch, followers } = await followedBranch();
    const [reader] = followers;
    const [a, b] = [await registerHuman(), await registerBot()];
    await write(a.token, branch);
    await settled(story.id);
    const [first] = (await inboxOf(reader.token)).items;
    expect(first.count).toBe(1);
    await write(a.token, branch);
    const last = await write(a.token, branch, words(5, "latest"));
    await settled(story.id);
    const [item] = (await inboxOf(reader.token)).items;
    expect(item).toMatchObject({ id: first.id, count: 3, segment: { id: last.body.data.id, excerpt: words(5, "latest") } });
    expect(item.message).toBe(`3 new segments on “main line” of “${story.title}”, the latest by ${a.input.username}`);
    expect(item.updated_at >= first.updated_at).toBe(true);
    expect(item.created_at).toBe(first.created_at);
    await write(b.token, branch);
    await settled(story.id);
    const inbox = await inboxOf(reader.token);
    expect(inbox.items).toHaveLength(1);
    expect(inbox.items[0]).toMatchObject({ id: first.id, count: 4, actor: { id: b.id, type: "bot" } });
  });

  it("a window past: the next segment starts a new item (INBOX_COLLAPSE_SECONDS 0)", async () => {
    const { story, branch, followers } = await followedBranch();
    const writer = await registerHuman();
    const captured = capturedQueue();
    for (let i = 0; i < 2; i++) {
      await write(writer.token, branch, words(4), { FANOUT: captured.queue });
      await drain(captured, { INBOX_COLLAPSE_SECONDS: "0" });
      await new Promise((r) => setTimeout(r, 5));
    }
    await settled(story.id);
    expect((await inboxOf(followers[0].token)).items.map((i: any) => i.count)).toEqual([1, 1]);
  });

  it("reach a follower of both the branch and its writer once, and an author's followers on any branch", async () => {
    const { story, branch, followers } = await followedBranch();
    const [both] = followers;
    const writer = await registerBot();
    await followOf(both.token, "author", writer.id);
    const fan = await registerHuman();
    await followOf(fan.token, "author", writer.id);
    const side = await createBranch((await registerHuman()).token, story.id);
    await write(writer.token, branch);
    await write(writer.token, side.id);
    await settled(story.id);
    // The follower of both hears of the main line's segment once (count 1), and of the side branch's through the writer.
    for (const account of [both, fan]) {
      expect((await storedItems(account.id)).map((i: any) => [i.collapse_key, i.count])).toEqual([
        [`segments ${branch}`, 1],
        [`segments ${side.id}`, 1],
      ]);
    }
  });

  it("writes no event, and sends nothing, for a segment nobody hears of", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const captured = capturedQueue();
    expect((await write(owner.token, story.main_branch_id, words(4), { FANOUT: captured.queue })).status).toBe(201);
    expect(captured.sent).toEqual([]);
    const n = await env.DB.prepare("SELECT count(*) AS n FROM inbox_events WHERE story_id = ?").bind(story.id).first<{ n: number }>();
    expect(n!.n).toBe(0);
  });
});

describe("following a story", () => {
  /** A story, a reader following it, and another account writing on it. */
  async function followedStory() {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const reader = await registerHuman();
    expect((await followOf(reader.token, "story", story.id)).status).toBe(201);
    return { owner, story, reader, writer: await registerHuman() };
  }

  it("another account's segments on the main line reach the story's followers and its owner, two quick ones as one item; the writer, following too, is not told", async () => {
    const { owner, story, reader, writer } = await followedStory();
    await followOf(writer.token, "story", story.id);
    await write(writer.token, story.main_branch_id);
    const last = (await write(writer.token, story.main_branch_id, words(5, "tide"))).body.data;
    await settled(story.id);
    for (const account of [reader, owner]) {
      const inbox = await inboxOf(account.token);
      expect(inbox.items).toEqual([
        expect.objectContaining({
          kind: "new_segments",
          count: 2,
          unread: true,
          message: `2 new segments on “main line” of “${story.title}”, the latest by ${writer.input.username}`,
          branch: { id: story.main_branch_id, title: "main line" },
          segment: expect.objectContaining({ id: last.id, excerpt: words(5, "tide") }),
        }),
      ]);
    }
    expect((await inboxOf(writer.token)).items).toEqual([]);
  });

  it("a segment on another branch does not reach the story's followers (its branch's followers hear of it); the new branch does, and its owner hears of it", async () => {
    const { owner, story, reader, writer } = await followedStory();
    const side = await createBranch(writer.token, story.id, { title: "Ebb" });
    const branchFan = await registerHuman();
    await followOf(branchFan.token, "branch", side.id);
    await write(writer.token, side.id);
    await settled(story.id);
    expect((await storedItems(reader.id)).map((i: any) => [i.kind, i.collapse_key])).toEqual([["new_branches", `branches ${story.id}`]]);
    // The branch forks from the owner's last segment: the owner hears of it once, as a fork of their segment.
    expect((await storedItems(owner.id)).map((i: any) => i.kind)).toEqual(["fork"]);
    // The main line's next segment does reach the reader: the side branch's was left out for being off the main line.
    await write(writer.token, story.main_branch_id);
    await settled(story.id);
    expect((await storedItems(reader.id)).map((i: any) => [i.kind, i.collapse_key])).toEqual([
      ["new_branches", `branches ${story.id}`],
      ["new_segments", `segments ${story.main_branch_id}`],
    ]);
    expect((await storedItems(branchFan.id)).map((i: any) => [i.kind, i.count])).toEqual([["new_segments", 1]]);
  });

  it("a follower of both the story and its main line (and its writer) hears of a run of segments once, as one of the story alone does", async () => {
    const { story, reader, writer } = await followedStory();
    const both = await registerHuman();
    for (const [type, id] of [
      ["story", story.id],
      ["branch", story.main_branch_id],
      ["author", writer.id],
    ]) {
      await followOf(both.token, type, id);
    }
    const captured = capturedQueue();
    for (let i = 0; i < 2; i++) await write(writer.token, story.main_branch_id, words(4), { FANOUT: captured.queue });
    await drain(captured, { FANOUT_PAGE_SIZE: "1" });
    await settled(story.id);
    for (const account of [reader, both]) {
      expect(await storedItems(account.id)).toEqual([{ kind: "new_segments", count: 2, collapse_key: `segments ${story.main_branch_id}` }]);
    }
  });

  it("an owner follows their story from its creation (a bot too), listed and counted; unfollowed, they hear nothing more, and a write nobody else hears of makes no event", async () => {
    const owner = await registerBot();
    const story = await createStory(owner.token);
    const [mine] = (await call("/me/follows", { token: owner.token })).body.data.follows;
    expect(mine).toMatchObject({ target_type: "story", target_id: story.id, followers_count: 1 });
    expect((await call(`/stories/${story.id}`)).body.data.followers_count).toBe(1);
    const writer = await registerHuman();
    await write(writer.token, story.main_branch_id);
    await settled(story.id);
    expect((await storedItems(owner.id)).map((i: any) => [i.kind, i.count])).toEqual([["new_segments", 1]]);
    expect((await call(`/follows/${mine.id}`, { method: "DELETE", token: owner.token })).status).toBe(200);
    expect((await call(`/stories/${story.id}`)).body.data.followers_count).toBe(0);
    const captured = capturedQueue();
    expect((await write(writer.token, story.main_branch_id, words(4), { FANOUT: captured.queue })).status).toBe(201);
    await createBranch(writer.token, story.id);
    await settled(story.id);
    expect(captured.sent).toEqual([]);
    expect((await storedItems(owner.id)).map((i: any) => [i.kind, i.count])).toEqual([["new_segments", 1]]);
  });

  it("the owner hears of another account's main-line segments from the write itself: no event, nothing queued, the item at once and collapsed; a follower of the writer still gets the fan-out, and the owner no second item", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const writer = await registerHuman();
    const captured = capturedQueue();
    expect((await write(writer.token, story.main_branch_id, words(4), { FANOUT: captured.queue })).status).toBe(201);
    expect((await write(writer.token, story.main_branch_id, words(5), { FANOUT: captured.queue })).status).toBe(201);
    expect(captured.sent).toEqual([]);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM inbox_events WHERE story_id = ? AND kind = 'segment'").bind(story.id).first<{ n: number }>();
    expect(events!.n).toBe(0);
    expect(await storedItems(owner.id)).toEqual([{ kind: "new_segments", count: 2, collapse_key: `segments ${story.main_branch_id}` }]);
    // The owner follows the writer too, and so does a reader: the fan-out tells the reader, and leaves the owner out.
    const reader = await registerHuman();
    for (const who of [owner, reader]) expect((await followOf(who.token, "author", writer.id)).status).toBe(201);
    expect((await write(writer.token, story.main_branch_id, words(6), { FANOUT: captured.queue })).status).toBe(201);
    expect(await drain(captured)).toBe(1);
    expect(await storedItems(owner.id)).toEqual([{ kind: "new_segments", count: 3, collapse_key: `segments ${story.main_branch_id}` }]);
    expect(await storedItems(reader.id)).toEqual([{ kind: "new_segments", count: 1, collapse_key: `segments ${story.main_branch_id}` }]);
    // A segment on another branch is no news of the story: its owner is not told.
    const fork = await createBranch(writer.token, story.id);
    await write(writer.token, fork.id, words(7), { FANOUT: captured.queue });
    expect((await storedItems(owner.id)).filter((i: any) => i.kind === "new_segments")).toHaveLength(1);
  });

  it("the stories one owns do not count toward LIMIT_FOLLOWS_PER_ACCOUNT: with two stories and a cap of 1, one more follow, then 409", async () => {
    const limit = { LIMIT_FOLLOWS_PER_ACCOUNT: "1" };
    const owner = await registerHuman();
    await createStory(owner.token);
    await createStory(owner.token);
    const [a, b] = [await registerBot(), await registerBot()];
    expect((await followOf(owner.token, "author", a.id, limit)).status).toBe(201);
    expect(expectError(await followOf(owner.token, "author", b.id, limit), 409, "CONFLICT").details).toEqual({ limit: 1, following: 1 });
    expect((await call("/me/follows", { token: owner.token })).body.data.pagination.total).toBe(3);
  });

  it("the migration gives the owner of a story made before it its follow, once, and counts the story's followers again", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const reader = await registerHuman();
    await followOf(reader.token, "story", story.id);
    // As a story made before owners followed their stories: no owner's follow, one follower counted.
    await env.DB.batch([
      env.DB.prepare("DELETE FROM follows WHERE follower_id = ? AND target_id = ?").bind(owner.id, story.id),
      env.DB.prepare("UPDATE follow_counts SET followers = 1 WHERE target_type = 'story' AND target_id = ?").bind(story.id),
    ]);
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.includes("owners_follow_their_stories"))!;
    for (let run = 0; run < 2; run++) for (const query of migration.queries) await env.DB.prepare(query).run();
    const follows = await env.DB.prepare("SELECT follower_id, follower_type FROM follows WHERE target_type = 'story' AND target_id = ?").bind(story.id).all();
    expect(follows.results).toHaveLength(2);
    expect(follows.results).toEqual(
      expect.arrayContaining([
        { follower_id: owner.id, follower_type: "human" },
        { follower_id: reader.id, follower_type: "human" },
      ]),
    );
    expect((await call(`/stories/${story.id}`)).body.data.followers_count).toBe(2);
    const writer = await registerHuman();
    await write(writer.token, story.main_branch_id);
    await settled(story.id);
    expect((await storedItems(owner.id)).map((i: any) => i.kind)).toEqual(["new_segments"]);
  });
});

describe("the other events", () => {
  it("a new story by a followed author; a new branch of a followed story; a branch forked from your segment (once, though you follow the story)", async () => {
    const author = await registerHuman();
    const fan = await registerHuman();
    await followOf(fan.token, "author", author.id);
    const story = await createStory(author.token);
    await settled(story.id);
    expect((await inboxOf(fan.token)).items).toEqual([
      expect.objectContaining({ kind: "new_story", count: 1, message: `${author.input.username} started a new story: “${story.title}”`, branch: null }),
    ]);
    // X wrote a segment of the main line and follows the story; F forks a branch from X's segment.
    const x = await registerHuman();
    await followOf(x.token, "story", story.id);
    const xs = (await write(x.token, story.main_branch_id)).body.data;
    const storyFan = await registerBot();
    await followOf(storyFan.token, "story", story.id);
    const forker = await registerHuman();
    const fork = await createBranch(forker.token, story.id, { title: "Low tide", fork_at_segment_id: xs.id });
    await settled(story.id);
    expect((await inboxOf(x.token)).items).toEqual([
      expect.objectContaining({
        kind: "fork",
        message: `${forker.input.username} forked a branch from your segment on “${story.title}”`,
        branch: { id: fork.id, title: "Low tide" },
        segment: expect.objectContaining({ id: xs.id }),
      }),
    ]);
    const [news] = (await inboxOf(storyFan.token)).items;
    expect(news).toMatchObject({ kind: "new_branches", count: 1, message: `1 new branch of “${story.title}” by ${forker.input.username}` });
    // The author's fans heard of the story, and of the author's own fork now.
    await createBranch(author.token, story.id, { title: "Neap tide" });
    await settled(story.id);
    expect((await inboxOf(storyFan.token)).items[0]).toMatchObject({ id: news.id, count: 2, message: `2 new branches of “${story.title}”` });
    expect((await storedItems(fan.id)).map((i: any) => i.kind)).toEqual(["new_story", "new_branches"]);
    expect((await inboxOf(forker.token)).items).toEqual([]);
  });

  it("a reply to your comment (not your own reply, not a comment that replies to nobody)", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const branch = story.main_branch_id;
    const [poster, replier] = [await registerHuman(), await registerBot()];
    const parent = (await call(`/branches/${branch}/comments`, { token: poster.token, body: { content: "Where does the tide go?" } })).body.data;
    await call(`/branches/${branch}/comments`, { token: poster.token, body: { content: "Never mind.", parent_comment_id: parent.id } });
    await call(`/branches/${branch}/comments`, { token: replier.token, body: { content: "Top level." } });
    const reply = (await call(`/branches/${branch}/comments`, { token: replier.token, body: { content: "Out to sea.", parent_comment_id: parent.id } })).body
      .data;
    await settled(story.id);
    expect((await inboxOf(poster.token)).items).toEqual([
      expect.objectContaining({
        kind: "reply",
        message: `${replier.name} replied to your comment on “main line” of “${story.title}”`,
        comment: { id: reply.id, excerpt: "Out to sea." },
        actor: { id: replier.id, name: replier.name, type: "bot" },
      }),
    ]);
    expect((await inboxOf(replier.token)).items).toEqual([]);
    expect((await inboxOf(owner.token)).items).toEqual([]);
  });

  it("a moderator's hide and restore of your content tell you, naming no moderator; nobody else is told", async () => {
    const { story, branch, followers } = await followedBranch();
    const writer = await registerHuman();
    const seg = (await write(writer.token, branch, words(4, "rude"))).body.data;
    await settled(story.id);
    const mod = await moderator();
    await hide(mod.token, "segments", seg.id, "spam");
    await restore(mod.token, "segments", seg.id);
    await settled(story.id);
    const items = (await inboxOf(writer.token)).items;
    expect(items.map((i: any) => i.message)).toEqual([
      `A moderator restored your segment on “${story.title}”`,
      `A moderator hid your segment on “${story.title}”: spam`,
    ]);
    expect(items[1]).toMatchObject({
      kind: "moderation",
      actor: null,
      moderation: { action: "hide", target_type: "segment", reason: "spam" },
      segment: { id: seg.id, excerpt: words(4, "rude") },
    });
    expect(JSON.stringify(items)).not.toContain(mod.id);
    expect((await inboxOf(followers[0].token)).items.map((i: any) => i.kind)).toEqual(["new_segments"]);
    expect((await inboxOf(mod.token)).items).toEqual([]);
  });
});

describe("exclusions", () => {
  it("nothing about content hidden before the fan-out, and nothing by an account suspended before it: the event settles unwritten", async () => {
    const { story, branch, followers } = await followedBranch();
    const [writer, other] = [await registerHuman(), await registerBot()];
    const captured = capturedQueue();
    const seg = (await write(writer.token, branch, words(4), { FANOUT: captured.queue })).body.data;
    await write(other.token, branch, words(4), { FANOUT: captured.queue });
    expect(captured.sent).toHaveLength(2);
    const mod = await moderator();
    await hide(mod.token, "segments", seg.id);
    const admin = await registerAdmin();
    expect((await call(`/admin/accounts/${other.id}/suspend`, { token: admin.token, body: { reason: "spam" } })).status).toBe(200);
    await drain(captured);
    await settled(story.id);
    expect((await inboxOf(followers[0].token)).items).toEqual([]);
  });

  it("nothing by a bot whose owner was suspended before the fan-out (the standing statement's rule)", async () => {
    const { story, branch, followers } = await followedBranch();
    const owner = await registerHuman();
    const registered = await call("/auth/bot/register", { token: owner.token, body: { name: `owned_${crypto.randomUUID().slice(0, 8)}`, model: "m" } });
    const bot = registered.body.data;
    const captured = capturedQueue();
    expect((await write(bot.api_key, branch, words(4), { FANOUT: captured.queue })).status).toBe(201);
    expect(captured.sent).toHaveLength(1);
    const admin = await registerAdmin();
    expect((await call(`/admin/accounts/${owner.id}/suspend`, { token: admin.token, body: { reason: "spam" } })).status).toBe(200);
    await drain(captured);
    await settled(story.id);
    expect((await inboxOf(followers[0].token)).items).toEqual([]);
  });

  it("a hide after the event takes its text from the inbox at once: the segment's excerpt, then the branch's and the story's titles", async () => {
    const { story, branch, followers } = await followedBranch();
    const reader = followers[0];
    const writer = await registerHuman();
    const seg = (await write(writer.token, branch, words(4, "secret"))).body.data;
    await settled(story.id);
    const mod = await moderator();
    await hide(mod.token, "segments", seg.id);
    const [masked] = (await inboxOf(reader.token)).items;
    expect(masked).toMatchObject({ hidden: true, segment: { id: seg.id, excerpt: "" }, branch: { title: "main line" } });
    // A moderator still reads it, as on every door.
    await followOf(mod.token, "branch", branch);
    await hide(mod.token, "branches", branch);
    const [gone] = (await inboxOf(reader.token)).items;
    expect(gone).toMatchObject({ hidden: true, branch: { id: branch, title: "" }, story: { title: story.title } });
    expect(gone.message).toBe(`1 new segment on a hidden branch of “${story.title}” by ${writer.input.username}`);
    await hide(mod.token, "stories", story.id);
    const [all] = (await inboxOf(reader.token)).items;
    expect(all.story.title).toBe("");
    expect(JSON.stringify(all)).not.toMatch(/secret|main line/);
    expect(JSON.stringify(all)).not.toContain(story.title);
  });
});

describe("read markers and the unread count", () => {
  it("marks by ids (others' and unknown ones skipped) and up to a time; a read item takes no more events; /auth/me counts the unread", async () => {
    const { story, branch, followers } = await followedBranch(2);
    const [reader, other] = followers;
    const writer = await registerBot();
    await write(writer.token, branch);
    await settled(story.id);
    const [item] = (await inboxOf(reader.token)).items;
    const [othersItem] = (await inboxOf(other.token)).items;
    const me = await call("/auth/me", { token: reader.token });
    expect(me.body).toMatchObject({ id: reader.id, unread_count: 1 });
    expect(me.headers.get("server-timing")).toMatch(/d1;desc="1 round trip"/);
    const marked = await call("/me/inbox/read", { token: reader.token, body: { ids: [item.id, othersItem.id, crypto.randomUUID()] } });
    expect(marked.status, marked.text).toBe(200);
    expect(marked.body.data).toEqual({ marked: 1, unread_count: 0 });
    expect((await inboxOf(other.token)).unread_count).toBe(1);
    // The next segment starts a new item: the read one keeps what was read.
    await write(writer.token, branch);
    await settled(story.id);
    const inbox = await inboxOf(reader.token);
    expect(inbox.items.map((i: any) => [i.count, i.unread])).toEqual([
      [1, true],
      [1, false],
    ]);
    expect(inbox.items[1].read_at).toEqual(expect.any(String));
    expect((await inboxOf(reader.token, "?unread=true")).items.map((i: any) => i.id)).toEqual([inbox.items[0].id]);
    const upTo = await call("/me/inbox/read", { token: reader.token, body: { up_to: inbox.items[0].updated_at } });
    expect(upTo.body.data).toEqual({ marked: 1, unread_count: 0 });
    expect((await call("/auth/me", { token: writer.token })).body).toMatchObject({ user_type: "bot", unread_count: 0 });
  });

  it("refuses a malformed marking with 400: neither or both of ids and up_to, over 100 ids, a time that is none; and unread=maybe", async () => {
    const reader = await registerHuman();
    for (const body of [{}, { ids: ["a"], up_to: new Date().toISOString() }, { ids: [] }, { ids: Array(101).fill("x") }, { up_to: "yesterday" }]) {
      expectError(await call("/me/inbox/read", { token: reader.token, body }), 400, "VALIDATION_ERROR");
    }
    expectError(await call("/me/inbox?unread=maybe", { token: reader.token }), 400, "VALIDATION_ERROR");
    expect((await call("/me/inbox?unread=TRUE&limit=5", { token: reader.token })).body.data.pagination).toEqual({
      limit: 5,
      offset: 0,
      total: 0,
      has_more: false,
    });
  });
});

describe("the fan-out", () => {
  it("writes a page of followers per step: 4 followers and the story's owner in pages of 2 take 3 steps, each once", async () => {
    const { story, branch, followers: readers, owner } = await followedBranch(4);
    const followers = [...readers, owner];
    const writer = await registerHuman();
    const captured = capturedQueue();
    await write(writer.token, branch, words(4), { FANOUT: captured.queue });
    expect(await drain(captured, { FANOUT_PAGE_SIZE: "2" })).toBe(3);
    for (const f of followers) expect(await storedItems(f.id)).toEqual([{ kind: "new_segments", count: 1, collapse_key: `segments ${branch}` }]);
    const event = await env.DB.prepare("SELECT cursor, settled_at FROM inbox_events WHERE story_id = ?").bind(story.id).first<any>();
    expect(event.settled_at).toEqual(expect.any(String));
    expect(event.cursor).toBe(
      followers
        .map((f) => f.id)
        .sort()
        .at(-1),
    );
  });

  it("writes each page once: the same step delivered twice at once, and again after the event settled, counts nobody twice", async () => {
    const { story, branch, followers } = await followedBranch(3);
    const writer = await registerHuman();
    const captured = capturedQueue();
    await write(writer.token, branch, words(4), { FANOUT: captured.queue });
    const [message] = captured.sent;
    captured.sent.push(message, message);
    await drain(captured, { FANOUT_PAGE_SIZE: "2" });
    captured.sent.push(message);
    expect(await drain(captured, { FANOUT_PAGE_SIZE: "2" })).toBe(1);
    await settled(story.id);
    for (const f of followers) expect((await storedItems(f.id)).map((i: any) => i.count)).toEqual([1]);
  });

  it("merges a writer's waiting segments on one branch into one pass: three events, one item counting 3", async () => {
    const { story, branch, followers } = await followedBranch(2);
    const writer = await registerHuman();
    const captured = capturedQueue();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await write(writer.token, branch, words(4), { FANOUT: captured.queue })).body.data.id);
    expect(captured.sent.map((m) => m.eventId)).toEqual(ids);
    expect(await drain(captured)).toBe(3); // the first step carries all three; the other two messages find them carried
    for (const f of followers) expect((await storedItems(f.id)).map((i: any) => i.count)).toEqual([3]);
    expect((await inboxOf(followers[0].token)).items[0].segment.id).toBe(ids[2]);
    const leaders = await env.DB.prepare("SELECT DISTINCT leader_id FROM inbox_events WHERE story_id = ?").bind(story.id).all();
    expect(leaders.results).toEqual([{ leader_id: ids[0] }]);
    await settled(story.id);
  });

  it("keeps a bounded history: beyond INBOX_ITEMS_PER_ACCOUNT the oldest items go", async () => {
    const author = await registerHuman();
    const fan = await registerHuman();
    await followOf(fan.token, "author", author.id);
    const captured = capturedQueue();
    const titles: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call("/stories", {
        token: author.token,
        body: {
          title: `Story ${i}`,
          background: "A harbour town.",
          starter: "Once.",
          initial_segments: ["a b c", "d e f", "g h i"],
          language: "en",
          min_length: 3,
        },
        env: { FANOUT: captured.queue },
      });
      titles.push(res.body.data.title);
      await drain(captured, { INBOX_ITEMS_PER_ACCOUNT: "3" });
    }
    expect((await inboxOf(fan.token)).items.map((i: any) => i.story.title)).toEqual(titles.slice(2).reverse());
  });

  it("an event whose hand-over failed is recorded, then handed over by the sweeper; the real consumer fans it out", async () => {
    const { story, branch, followers } = await followedBranch();
    const writer = await registerHuman();
    const failing = {
      send: async () => {
        throw new Error("queue down");
      },
      sendBatch: async () => {
        throw new Error("queue down");
      },
    } as unknown as Queue;
    expect((await write(writer.token, branch, words(4), { FANOUT: failing })).status).toBe(201);
    const event = await env.DB.prepare("SELECT id, last_error, settled_at FROM inbox_events WHERE story_id = ?").bind(story.id).first<any>();
    expect(event).toMatchObject({ last_error: "queue send failed: queue down", settled_at: null });
    const swept = await sweep(env, Date.now() + 120_000);
    expect(swept.refanned).toBeGreaterThanOrEqual(1);
    await settled(story.id);
    expect((await inboxOf(followers[0].token)).items).toHaveLength(1);
    const after = await env.DB.prepare("SELECT sends FROM inbox_events WHERE id = ?").bind(event.id).first<any>();
    expect(after.sends).toBe(1);
  });

  it("the sweeper prunes an item INBOX_KEEP_DAYS after its last activity, read or not, and keeps a newer one", async () => {
    const { story, branch, followers } = await followedBranch(2);
    const writer = await registerHuman();
    expect((await write(writer.token, branch)).status).toBe(201);
    await settled(story.id);
    const [old, recent] = followers;
    expect((await inboxOf(old.token)).items).toHaveLength(1);
    // The first follower's item had its last activity 91 days ago; the second's a day ago.
    const at = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    await env.DB.prepare("UPDATE inbox_items SET started_at = ?1, updated_at = ?1 WHERE account_id = ?2").bind(at(91), old.id).run();
    await env.DB.prepare("UPDATE inbox_items SET started_at = ?1, updated_at = ?1 WHERE account_id = ?2").bind(at(1), recent.id).run();
    await sweep(env);
    expect((await inboxOf(old.token)).items).toHaveLength(0);
    expect((await inboxOf(recent.token)).items).toHaveLength(1);
  });
});

describe("over MCP", () => {
  it("follow, list_follows, read_inbox, mark_inbox_read and unfollow: the REST use cases, for bots", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const bot = await registerBot();
    const followed = await mcpTool("follow", { target_type: "story", target_id: story.id }, bot.apiKey);
    expect(followed.result.isError).toBeFalsy();
    const followId = followed.result.structuredContent.id;
    expect((await mcpTool("list_follows", {}, bot.apiKey)).result.structuredContent.follows.map((f: any) => f.id)).toEqual([followId]);
    await createBranch(owner.token, story.id, { title: "Spring tide" });
    await settled(story.id);
    const inbox = (await mcpTool("read_inbox", { unread: true }, bot.apiKey)).result.structuredContent;
    expect(inbox.items).toEqual([expect.objectContaining({ kind: "new_branches", branch: expect.objectContaining({ title: "Spring tide" }) })]);
    const marked = (await mcpTool("mark_inbox_read", { ids: [inbox.items[0].id] }, bot.apiKey)).result.structuredContent;
    expect(marked).toEqual({ marked: 1, unread_count: 0 });
    expect((await mcpTool("unfollow", { follow_id: followId }, bot.apiKey)).result.structuredContent).toEqual({ id: followId, deleted: true });
    // /mcp takes no anonymous call (401 at the transport, test/mcp.test.ts); another bot reads its own inbox, empty.
    const stranger = (await mcpTool("read_inbox", {})).result;
    expect(stranger.isError).toBeFalsy();
    expect(stranger.structuredContent.items).toEqual([]);
  });
});
