// Runs alone (vitest.config.ts): its first test sees a site with no story yet.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createBranch, registerHuman, storyWithSegments, submit, vote, words } from "./helpers";
import { ORIGIN, get, page, shown, visible } from "./pages";

/**
 * The first page a person sees: what Storyloom is and the two next steps (an empty site inviting the first story),
 * story cards that say what a story is about, "Continue this story", the favicon, the register page's words, and a
 * branch's score in words a person reads. This file has the database to itself (vitest.config.ts): its first test
 * sees a site with no story.
 */

/** The home page's intro line: what Storyloom is, in one line. */
const WHAT = "Storyloom is where people and bots write branching stories together";

/** The story cards of a list page, each as its markup. */
const cards = (html: string) => html.match(/<li><article[\s\S]*?<\/article><\/li>/g) ?? [];
const cardOf = (html: string, title: string) => cards(html).find((c) => c.includes(title));

describe("the home page", () => {
  it("an empty site says what Storyloom is and invites the first story (no list to read)", async () => {
    const res = await page("/");
    expect(res.status).toBe(200);
    const text = visible(res.text);
    expect(text).toContain(WHAT);
    expect(text).toContain("No stories yet");
    expect(res.text).toMatch(/<a class="button primary" href="\/stories\/new">Start the first story<\/a>/);
    // Nothing to read yet: no "Read a story" step, no pager.
    expect(res.text).not.toContain("Read a story");
    expect(res.text).not.toContain('class="pager"');
  });

  it("with stories: the line, the two next steps (read one, start one), and the list they lead to", async () => {
    await storyWithSegments();
    const res = await page("/");
    const text = visible(res.text);
    expect(text).toContain(WHAT);
    expect(res.text).toMatch(/<a class="button primary" href="#stories">Read a story<\/a>/);
    expect(res.text).toMatch(/<a class="button" href="\/stories\/new">Start a story<\/a>/);
    expect(res.text).toMatch(/<h2 id="stories">Newest stories<\/h2>/);
    expect(text).not.toContain("No stories yet");
    // The intro heads the first page only; a later page is the list alone.
    expect(visible(shown(await page("/?page=2")))).not.toContain(WHAT);
  });

  it("a story card: its background as a blurb cut short, its labels, its length and its last activity", async () => {
    const background = `${words(60, "tide")} THE-END-OF-THE-BACKGROUND`;
    const { owner, story } = await storyWithSegments({ background, tags: ["harbours"], rating: "teen", warnings: ["violence"] });
    const fork = await createBranch(owner.token, story.id, { title: "A side way" });
    const last = await submit(owner.token, fork.id, words(4, "later"));
    expect(last.status, last.text).toBe(201);
    const card = cardOf((await page("/")).text, story.title);
    expect(card, "the story's card").toBeDefined();
    const blurb = /<p class="blurb">([^<]*)<\/p>/.exec(card!)?.[1];
    expect(blurb, card).toBeDefined();
    expect(blurb!.startsWith("tide0 tide1 tide2")).toBe(true);
    expect(blurb!.endsWith("…")).toBe(true);
    expect(blurb).not.toContain("THE-END-OF-THE-BACKGROUND");
    const text = visible(card!);
    expect(text).toContain("Rated Teen");
    expect(text).toContain("violence");
    expect(text).toContain("harbours");
    expect(text).toContain("2 branches · 5 segments");
    // The last activity: the newest segment written on any of its branches.
    expect(card).toContain(`last written <time datetime="${last.body.data.created_at}">`);
  });
});

describe("a story page", () => {
  it('"Continue this story" beside the main line leads to its write form, or to log in first; none once archived', async () => {
    const { owner, story } = await storyWithSegments();
    const write = `/branches/${story.main_branch_id}#write-form`;
    const signedIn = await get(`/stories/${story.id}`, owner.token);
    expect(signedIn.text).toContain(`<a class="button primary" href="${write}">Continue this story</a>`);
    const anonymous = await get(`/stories/${story.id}`);
    expect(anonymous.text).toContain(`<a class="button primary" href="/login?next=${encodeURIComponent(write)}">Continue this story</a>`);
    // The link after logging in lands on the form itself.
    const reader = await registerHuman();
    const login = await exports.default.fetch(`${ORIGIN}/login?next=${encodeURIComponent(write)}`, {
      method: "POST",
      headers: { Origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", "CF-Connecting-IP": "198.51.100.7" },
      body: new URLSearchParams({ email: reader.input.email as string, password: reader.input.password as string }),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    expect(login.headers.get("location")).toBe(write);
    expect((await get(`/branches/${story.main_branch_id}`, reader.token)).text).toContain('id="write-form"');
    expect((await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } })).status).toBe(200);
    expect(shown(await get(`/stories/${story.id}`, owner.token))).not.toContain("Continue this story");
  });
});

describe("small things", () => {
  it("/favicon.ico is an icon among the static assets, and every page links it", async () => {
    const res = await env.ASSETS.fetch(`${ORIGIN}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^image\//);
    const bytes = new Uint8Array(await res.arrayBuffer());
    // An ICO file: reserved 0, type 1 (icon), at least one image.
    expect([...bytes.slice(0, 4)]).toEqual([0, 0, 1, 0]);
    expect(bytes[4] + bytes[5] * 256).toBeGreaterThan(0);
    const svg = await env.ASSETS.fetch(`${ORIGIN}/favicon.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    for (const path of ["/", "/login", "/register", "/no-such-page"]) {
      const html = (await page(path)).text;
      expect(html, path).toContain('<link rel="icon" href="/favicon.ico" sizes="32x32"/>');
      expect(html, path).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml"/>');
    }
  });

  it('the register page says bots are made on "My bots", not that they register through the API', async () => {
    const text = visible(shown(await page("/register")));
    expect(text).not.toContain("Bots register through the API");
    expect(text).toContain("Bots are made by their people: once you are signed in, “My bots” makes one and gives it its key.");
  });

  it("a branch's score says how many votes made it: one person's vote on the branch and one on a segment are 2 votes, score +2", async () => {
    const { owner, story, segments } = await storyWithSegments();
    const reader = await registerHuman();
    const scoreLine = async () =>
      /<span class="score-line"[^>]*>score <span id="branch-score">[^<]*<\/span> <span id="branch-votes">[^<]*<\/span><\/span>/.exec(
        (await get(`/branches/${story.main_branch_id}`, owner.token)).text,
      )?.[0];
    expect(visible((await scoreLine()) ?? "")).toBe("score 0 (no votes yet)");
    expect((await vote(reader.token, "branch", story.main_branch_id, 1)).status).toBe(201);
    expect(visible((await scoreLine()) ?? "")).toBe("score +1 from 1 vote on the branch");
    expect((await vote(reader.token, "segment", segments[1].id, 1)).status).toBe(201);
    const both = (await scoreLine()) ?? "";
    expect(visible(both)).toBe("score +2 from 2 votes: 1 on the branch, 1 on its segments");
    // The title says what the score is, weights included.
    expect(both).toContain(
      'title="The votes on this branch and on its own segments, each weighted: a person&#39;s vote counts 1, a bot&#39;s 0.3 to 0.8 by its reputation"',
    );
  });
});
