import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { address, call, expectError, join, registerBot, registerHuman, storyWithSegments, submit, unique, words } from "./helpers";
import { COOKIE, ORIGIN, type Sent, get, post, shown } from "./pages";

/**
 * The web reader's forms (src/web/routes/writing.tsx): sessions, every form's happy path, its errors shown in words
 * on its page, and the session's security (Origin check, cookie flags, no open redirect, the cookie is not an
 * API credential). Everything goes through the Worker's own fetch, as a browser would send it.
 */

const sessionOf = (res: Sent) => new RegExp(`${COOKIE}=([^;]+)`).exec(res.headers.get("set-cookie") ?? "")?.[1];

/** The error shown inside a form: the text of its role="alert" box. */
const alertOf = (html: string) =>
  /<div class="form-error" role="alert"[^>]*>([\s\S]*?)<\/div>/
    .exec(html)?.[1]
    .replace(/<[^>]*>/g, " ")
    .replace(/&gt;/g, ">")
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ")
    .trim();

const scoreOf = (html: string) => /<span id="branch-score">([^<]*)<\/span>/.exec(html)?.[1];

function expectSeeOther(res: Sent, location: RegExp | string) {
  expect(res.status, res.text.slice(0, 400)).toBe(303);
  if (typeof location === "string") expect(res.location).toBe(location);
  else expect(res.location).toMatch(location);
}

/** A branch to write on: its story (3-to-50-word rule) owned by someone else, and a signed-in human. */
async function scene() {
  const { owner, story, segments } = await storyWithSegments();
  const human = await registerHuman();
  return { owner, story, segments, human, branchId: story.main_branch_id as string };
}

const segmentsOf = async (branchId: string) => (await call(`/branches/${branchId}/segments`)).body.data.segments as any[];
const commentsOf = async (branchId: string) => (await call(`/branches/${branchId}/comments`)).body.data.comments as any[];

describe("web forms: the happy path", () => {
  it("register: a 303 to where one was going, with an HttpOnly, SameSite=Lax, Secure session cookie; the header names them", async () => {
    const username = unique("web");
    const res = await post("/register?next=%2Fstories%2Fnew", { username, email: `${username}@example.com`, password: "a good password" });
    expectSeeOther(res, "/stories/new");
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(new RegExp(`^${COOKIE}=`));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Secure/i);
    expect(cookie).toMatch(/Max-Age=86400/);
    const home = await get("/", sessionOf(res));
    expect(home.text).toContain(`Signed in as ${username}`);
    expect(home.text).toContain('href="/stories/new"');
    // The account exists for the API too: the same password logs in.
    expect((await call("/auth/login", { body: { email: `${username}@example.com`, password: "a good password" } })).status).toBe(200);
  });

  it("on localhost the cookie is not Secure (http), everywhere else it is", async () => {
    const username = unique("web");
    const res = await post("/register", { username, email: `${username}@example.com`, password: "a good password" }, { site: "http://localhost:8787" });
    expectSeeOther(res, "/");
    expect(res.headers.get("set-cookie")).toMatch(/^storyloom_session=/);
    expect(res.headers.get("set-cookie")).not.toMatch(/Secure/i);
    expect(res.headers.get("set-cookie")).toMatch(/HttpOnly/i);
  });

  it("log in and log out", async () => {
    const human = await registerHuman();
    const res = await post("/login", { email: human.input.email, password: human.input.password });
    expectSeeOther(res, "/");
    const session = sessionOf(res)!;
    expect((await get("/", session)).text).toContain(`Signed in as ${human.input.username}`);
    const out = await post("/logout", {}, { session });
    expectSeeOther(out, "/");
    expect(out.headers.get("set-cookie")).toMatch(new RegExp(`${COOKIE}=;.*Max-Age=0`));
  });

  it("create a story: the form's fields become the API's story, with its main line", async () => {
    const human = await registerHuman();
    const form = await get("/stories/new", human.token);
    expect(form.status).toBe(200);
    for (const label of ["Title", "Language", "Background", "Style rules", "Shortest segment", "Longest segment", "Opening", "Segment 1", "Segment 5"]) {
      expect(form.text).toMatch(new RegExp(`<label for="[^"]+">${label}</label>`));
    }
    const res = await post(
      "/stories",
      {
        title: "Salt & <ink>",
        language: "en",
        background: "A harbour town where the tide never comes back.",
        style_rules: "",
        min_length: "3",
        max_length: "40",
        starter: "It began at dawn.",
        segment_1: words(4, "a"),
        segment_2: words(4, "b"),
        segment_3: words(4, "c"),
        segment_4: "",
        segment_5: words(4, "e"),
      },
      { session: human.token },
    );
    expectSeeOther(res, /^\/stories\/[0-9a-f-]{36}$/);
    const story = (await call(res.location!)).body.data;
    expect(story).toMatchObject({ title: "Salt & <ink>", language: "en", min_length: 3, max_length: 40, style_rules: null, owner_id: human.id });
    const main = await segmentsOf(story.main_branch_id);
    expect(main.map((s) => s.content)).toEqual(["It began at dawn.", words(4, "a"), words(4, "b"), words(4, "c"), words(4, "e")]);
  });

  it("write the next segment: a 303 to it; the page shows it", async () => {
    const { human, branchId } = await scene();
    const page = await get(`/branches/${branchId}`, human.token);
    expect(page.text).toContain('<label for="write">Next segment</label>');
    expect(page.text).toMatch(/<output id="write-count"[^>]*>Length: 3–50 words<\/output>/);
    const res = await post(`/branches/${branchId}/segments`, { content: "The gulls came back first." }, { session: human.token });
    const written = (await segmentsOf(branchId)).at(-1);
    expect(written.content).toBe("The gulls came back first.");
    expect(written.bot_id).toBe(human.id);
    expectSeeOther(res, `/branches/${branchId}#s-${written.id}`);
    expect((await get(`/branches/${branchId}`, human.token)).text).toContain("The gulls came back first.");
  });

  it("vote on a branch and on a segment: up, then down replaces it", async () => {
    const { human, branchId, segments } = await scene();
    expectSeeOther(await post(`/branches/${branchId}/votes`, { vote: "1" }, { session: human.token }), `/branches/${branchId}`);
    expect((await call(`/branches/${branchId}/votes/summary`)).body.data).toMatchObject({ upvotes: 1, downvotes: 0 });
    const voted = (await get(`/branches/${branchId}`, human.token)).text;
    expect(scoreOf(voted)).toBe("+1");
    // One's own vote shows as the pressed button.
    expect(voted).toContain('aria-label="Vote this branch up" aria-pressed="true"');
    expect(voted).toContain('aria-label="Vote this branch down" aria-pressed="false"');
    const target = segments[1].id;
    expectSeeOther(await post(`/branches/${branchId}/segments/${target}/votes`, { vote: "1" }, { session: human.token }), `/branches/${branchId}#s-${target}`);
    expectSeeOther(await post(`/branches/${branchId}/segments/${target}/votes`, { vote: "-1" }, { session: human.token }), `/branches/${branchId}#s-${target}`);
    expect((await call(`/segments/${target}/votes/summary`)).body.data).toMatchObject({ upvotes: 0, downvotes: 1 });
    expect((await get(`/branches/${branchId}`, human.token)).text).toContain(`aria-label="Vote segment #2 down" aria-pressed="true"`);
    // A branch's score counts the votes on it and on its segments: +1 - 1.
    expect(scoreOf((await get(`/branches/${branchId}`, human.token)).text)).toBe("0");
  });

  it("comment and reply: the reply is threaded under its comment", async () => {
    const { human, branchId } = await scene();
    const first = await post(`/branches/${branchId}/comments`, { content: "Lovely <b>start</b>" }, { session: human.token });
    const [comment] = await commentsOf(branchId);
    expectSeeOther(first, `/branches/${branchId}#c-${comment.id}`);
    const reply = await post(`/branches/${branchId}/comments`, { content: "Agreed.", parent_comment_id: comment.id }, { session: human.token });
    expectSeeOther(reply, /#c-/);
    const all = await commentsOf(branchId);
    expect(all.find((c) => c.content === "Agreed.")?.parent_comment_id).toBe(comment.id);
    const page = (await get(`/branches/${branchId}`, human.token)).text;
    expect(page).toContain("Lovely &lt;b&gt;start&lt;/b&gt;");
    expect(page).toMatch(/<summary>Reply<\/summary>/);
  });

  it("fork from a segment: a 303 to the new branch, forked where asked, with its first segment", async () => {
    const { story, human, branchId, segments } = await scene();
    const res = await post(
      `/branches/${branchId}/forks`,
      { story_id: story.id, fork_at_segment_id: segments[1].id, title: "Low water", initial_segment: words(5, "fork") },
      { session: human.token },
    );
    expectSeeOther(res, /^\/branches\/[0-9a-f-]{36}$/);
    const branch = (await call(res.location!)).body.data;
    expect(branch).toMatchObject({ title: "Low water", parent_branch_id: branchId, fork_at_segment_id: segments[1].id, segments_count: 1 });
    expect((await get(res.location!, human.token)).text).toContain("<h1>Low water</h1>");
  });

  it("a signed-in page is private: not from or into the shared read cache, and varies with the cookie", async () => {
    const { human, branchId } = await scene();
    await get(`/branches/${branchId}`); // anonymous: fills the micro-cache
    const mine = await get(`/branches/${branchId}`, human.token);
    expect(mine.headers.get("x-read-cache")).toBeNull();
    expect(mine.headers.get("cache-control")).toBe("private, no-cache");
    expect(mine.headers.get("vary")).toMatch(/Cookie/);
    expect(mine.text).toContain(`Signed in as ${human.input.username}`);
    // Its forms cost nothing more: still one D1 round trip (the session is a signed token, not a look-up).
    expect(mine.headers.get("server-timing")).toMatch(/d1;desc="1 round trip"/);
    const anonymous = await get(`/branches/${branchId}`);
    expect(shown(anonymous)).not.toContain("Signed in as");
    expect(anonymous.text).toContain("to write, vote, comment and fork");
    expect(anonymous.headers.get("cache-control")).toBe("no-cache");
  });

  it("every page sends a same-origin Content-Security-Policy", async () => {
    const res = await get("/");
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const part of ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "form-action 'self'", "frame-ancestors 'none'"])
      expect(csp).toContain(part);
    // Not no-referrer: under it browsers send `Origin: null` with our own forms, which the Origin check refuses.
    expect(res.headers.get("referrer-policy")).toBe("same-origin");
  });
});

describe("web forms: errors in words, next to the form", () => {
  it("a segment too short: 422, the rule in words inside the write form, the text kept, nothing written", async () => {
    const { human, branchId } = await scene();
    const before = (await segmentsOf(branchId)).length;
    const res = await post(`/branches/${branchId}/segments`, { content: "Too short" }, { session: human.token });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(alertOf(res.text)).toBe("Content is 2 words; the minimum is 3. Add at least 1 more word.");
    expect(res.text).toMatch(/<form method="post" action="\/branches\/[^"]+\/segments" id="write-form"><div class="form-error"/);
    expect(res.text).toMatch(/<textarea id="write"[^>]*>Too short<\/textarea>/);
    expect(res.text).not.toMatch(/"status":"error"|"code":/);
    expect((await segmentsOf(branchId)).length).toBe(before);
  });

  it("registration: each bad field by its label, in words; a taken name is a conflict", async () => {
    const res = await post("/register", { username: "", email: "not-an-email", password: "short" });
    expect(res.status).toBe(400);
    expect(alertOf(res.text)).toBe("Please check these fields: Username: is required Email: must be an email address Password: needs at least 8 characters");
    expect(res.headers.get("set-cookie")).toBeNull();
    const human = await registerHuman();
    const taken = await post("/register", { username: human.input.username, email: `${unique()}@example.com`, password: "a good password" });
    expect(taken.status).toBe(409);
    expect(alertOf(taken.text)).toMatch(/taken|exists|already/i);
    expect(taken.text).toContain(`value="${human.input.username}"`);
  });

  it("a wrong password: 401 on the login page, the email kept, the password never sent back", async () => {
    const human = await registerHuman();
    const res = await post("/login", { email: human.input.email, password: "wrong password" });
    expect(res.status).toBe(401);
    expect(alertOf(res.text)).toBe("Email or password is incorrect.");
    expect(res.text).toContain(`value="${human.input.email}"`);
    expect(res.text).not.toContain("wrong password");
  });

  it("the story form: a missing segment named by its label; segment length by its label", async () => {
    const human = await registerHuman();
    const base = { title: "T", language: "en", background: "A long enough background.", min_length: "3", max_length: "40", starter: "Go." };
    const missing = await post("/stories", { ...base, segment_1: words(4), segment_2: words(4) }, { session: human.token });
    expect(missing.status).toBe(400);
    expect(alertOf(missing.text)).toBe("Please check these fields: Segments 1 to 3: need at least 3 filled in");
    const short = await post("/stories", { ...base, segment_1: words(4), segment_2: "tiny", segment_3: words(4) }, { session: human.token });
    expect(short.status).toBe(400);
    expect(alertOf(short.text)).toBe("Please check these fields: Segment 2: is 1 word; the shortest allowed is 3: add 2 more words");
    expect(short.text).toMatch(/<textarea id="segment_2"[^>]*>tiny<\/textarea>/);
    const rules = await post(
      "/stories",
      { ...base, min_length: "50", max_length: "10", segment_1: "x", segment_2: "y", segment_3: "z" },
      { session: human.token },
    );
    // A rule the wrong way round is named on its field; the segments are not measured against it.
    expect(alertOf(rules.text)).toBe("Please check these fields: Shortest segment: must not be more than the longest segment");
  });

  it("the story form names every field out of its rule at once, in the form's order (the API still answers the first)", async () => {
    const human = await registerHuman();
    const fields = {
      title: "",
      language: "en",
      background: "Too short",
      min_length: "5",
      max_length: "10",
      starter: "Go.",
      segment_1: words(2),
      segment_2: words(6),
      segment_3: words(12),
      segment_4: "",
      segment_5: words(3),
    };
    const res = await post("/stories", fields, { session: human.token });
    expect(res.status).toBe(400);
    expect(alertOf(res.text)).toBe(
      "Please check these fields: " +
        [
          "Title: is required",
          "Background: needs at least 10 characters",
          "Segment 1: is 2 words; the shortest allowed is 5: add 3 more words",
          "Segment 3: is 12 words; the longest allowed is 10: remove 2 words",
          "Segment 5: is 3 words; the shortest allowed is 5: add 2 more words",
        ].join(" "),
    );
    // Every field comes back as typed, and the rule as chosen.
    expect(res.text).toMatch(/<input id="min_length" name="min_length" type="number" value="5"/);
    expect(res.text).toMatch(new RegExp(`<textarea id="segment_3"[^>]*>${words(12)}</textarea>`));
    // Characters, for a language that counts them: each short segment named with its count.
    const zh = { ...fields, title: "故事", background: "一个很长的背景故事，足够长了。", language: "zh" };
    const chars = await post(
      "/stories",
      { ...zh, segment_1: "短", segment_2: "七个字的一段话", segment_3: "长".repeat(11), segment_5: "" },
      { session: human.token },
    );
    expect(alertOf(chars.text)).toBe(
      "Please check these fields: Segment 1: is 1 character; the shortest allowed is 5: add 4 more characters " +
        "Segment 3: is 11 characters; the longest allowed is 10: remove 1 character",
    );
    // The API answers as the spec says: the first segment out of the rule, 422.
    const api = await call("/stories", {
      token: human.token,
      body: {
        title: "T",
        background: "A long enough background.",
        language: "en",
        min_length: 5,
        max_length: 10,
        starter: "Go.",
        initial_segments: [words(2), words(6), words(12)],
      },
    });
    expect(expectError(api, 422, "SEGMENT_TOO_SHORT").details).toMatchObject({ field: "initial_segments", index: 0 });
  });

  it("the story form says what lengths count and suggests a rule a person can meet, for the language shown", async () => {
    const human = await registerHuman();
    const form = await get("/stories/new", human.token);
    expect(form.text).toMatch(/counted in <strong data-length-unit="">words<\/strong>/);
    expect(form.text).toMatch(/<input id="min_length" name="min_length" type="number" value="30"[^>]*data-default-words="30" data-default-characters="50"/);
    expect(form.text).toMatch(/<input id="max_length" name="max_length" type="number" value="300"[^>]*data-default-words="300" data-default-characters="500"/);
    expect(form.text).toContain('<output id="segment_1-count" class="hint" for="segment_1" aria-live="off">Length: 30–300 words</output>');
    // Came back in Chinese: characters, and the rule the person chose.
    const back = await post(
      "/stories",
      { title: "", language: "zh", background: "背景", min_length: "40", max_length: "80", starter: "" },
      { session: human.token },
    );
    expect(back.text).toMatch(/counted in <strong data-length-unit="">characters<\/strong>/);
    expect(back.text).toContain(">Length: 40–80 characters</output>");
  });

  it("voting on one's own writing is refused in words, at the vote buttons", async () => {
    const { owner, branchId, segments } = await scene();
    const res = await post(`/branches/${branchId}/segments/${segments[0].id}/votes`, { vote: "1" }, { session: owner.token });
    expect(res.status).toBe(403);
    expect(alertOf(res.text)).toBe("You cannot vote on your own content.");
    expect(res.text).toMatch(new RegExp(`action="/branches/${branchId}/segments/${segments[0].id}/votes" class="vote"><div class="form-error"`));
    expect(res.text).toMatch(/<title>Error: /);
    // Shown normally, one's own segments carry no vote buttons; others' do.
    const page = shown(await get(`/branches/${branchId}`, owner.token));
    expect(page).not.toContain(`action="/branches/${branchId}/segments/${segments[0].id}/votes"`);
    const stranger = await registerHuman();
    expect((await get(`/branches/${branchId}`, stranger.token)).text).toContain(`action="/branches/${branchId}/segments/${segments[0].id}/votes"`);
  });

  it("a fork with no title: the fork form opens again with the error", async () => {
    const { story, human, branchId, segments } = await scene();
    const res = await post(`/branches/${branchId}/forks`, { story_id: story.id, fork_at_segment_id: segments[2].id, title: "" }, { session: human.token });
    expect(res.status).toBe(400);
    expect(alertOf(res.text)).toBe("Please check these fields: Branch title: is required");
    expect(res.text).toMatch(/<details class="fold" open="">\s*<summary>Fork from here<\/summary>\s*<form[^>]*><div class="form-error"/);
  });

  it("the same limits as the API: a fork past a person's limit is a 429 saying when, in a <time> the page's script localises", async () => {
    const { story, human, branchId, segments } = await scene();
    const fork = (title: string) =>
      post(
        `/branches/${branchId}/forks`,
        { story_id: story.id, fork_at_segment_id: segments[0].id, title },
        { session: human.token, env: { LIMIT_HUMAN_BRANCHES_PER_HOUR: "1" } },
      );
    expectSeeOther(await fork("First"), /^\/branches\//);
    const second = await fork("Second");
    expect(second.status).toBe(429);
    const retryAfter = Number(second.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    // Not a count of seconds: the minute the person may write again, in UTC until the script says it in their clock.
    expect(alertOf(second.text)).toMatch(/^Limit reached: 1 per hour\. You can write again at (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC ?\.$/);
    const time = /<time datetime="([^"]+)" data-local="">/.exec(second.text);
    expect(time, "the refusal's <time data-local>").not.toBeNull();
    const at = Date.parse(time![1]);
    // Rounded up to the minute: at the minute shown the person can write.
    expect(at % 60_000).toBe(0);
    expect(at).toBeGreaterThanOrEqual(Date.now() + (retryAfter - 5) * 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + (retryAfter + 60) * 1000);
    expect(second.text).toContain('<script type="module" src="/reader/reader.js">');
  });

  it("a person writes at their own pace on the web: 10 segments in a row and 3 forks in the hour, with the real limits", async () => {
    const { story, human, branchId, segments } = await scene();
    const real = {
      LIMIT_SEGMENTS_PER_HOUR: "20",
      LIMIT_SEGMENTS_PER_DAY: "100",
      LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR: "2",
      LIMIT_BRANCHES_PER_HOUR: "1",
      LIMIT_HUMAN_BRANCHES_PER_HOUR: "10",
    };
    for (let i = 0; i < 10; i++) {
      expectSeeOther(await post(`/branches/${branchId}/segments`, { content: words(4, `w${i}`) }, { session: human.token, env: real }), /#s-/);
    }
    for (let i = 0; i < 3; i++) {
      const fields = { story_id: story.id, fork_at_segment_id: segments[i].id, title: `What if ${i}` };
      expectSeeOther(await post(`/branches/${branchId}/forks`, fields, { session: human.token, env: real }), /^\/branches\//);
    }
  });

  it("a limit the web and the API share: a person's segments count across both", async () => {
    const { human, branchId } = await scene();
    const limit = { LIMIT_SEGMENTS_PER_HOUR: "2" };
    expect((await call(`/branches/${branchId}/segments`, { token: human.token, body: { content: words(4, "api") }, env: limit })).status).toBe(201);
    expectSeeOther(await post(`/branches/${branchId}/segments`, { content: words(4, "web") }, { session: human.token, env: limit }), /#s-/);
    const third = await post(`/branches/${branchId}/segments`, { content: words(4, "more") }, { session: human.token, env: limit });
    expect(third.status).toBe(429);
  });

  it("an error whose form is not on the page is shown at its top (a reply to a comment that is gone)", async () => {
    const { human, branchId } = await scene();
    const res = await post(`/branches/${branchId}/comments`, { content: "hello?", parent_comment_id: crypto.randomUUID() }, { session: human.token });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.text).toMatch(/<main><div class="form-error" role="alert"/);
    expect(alertOf(res.text)).toBeTruthy();
  });

  it("an unknown branch is the HTML 404 page", async () => {
    const human = await registerHuman();
    const res = await post(`/branches/${crypto.randomUUID()}/comments`, { content: "hello" }, { session: human.token });
    expect(res.status).toBe(404);
    expect(res.text).toContain("<h1>Not found</h1>");
  });
});

describe("web forms: security", () => {
  it("a form from another site is refused (403 page) and writes nothing; so is one without Origin or Sec-Fetch-Site", async () => {
    const { human, branchId } = await scene();
    for (const origin of ["http://evil.example", "null", null]) {
      const res = await post(`/branches/${branchId}/comments`, { content: "forged" }, { session: human.token, origin });
      expect(res.status, String(origin)).toBe(403);
      expect(res.text).toContain("forms are accepted only from Storyloom");
    }
    expect(await commentsOf(branchId)).toEqual([]);
    // A browser that sends only Sec-Fetch-Site: same-origin is this site's own page.
    const same = await post(
      `/branches/${branchId}/comments`,
      { content: "mine" },
      { session: human.token, origin: null, headers: { "Sec-Fetch-Site": "same-origin" } },
    );
    expectSeeOther(same, /#c-/);
  });

  it("login and logout are Origin-checked too (no login CSRF)", async () => {
    const human = await registerHuman();
    const res = await post("/login", { email: human.input.email, password: human.input.password }, { origin: "http://evil.example" });
    expect(res.status).toBe(403);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect((await post("/logout", {}, { session: human.token, origin: "http://evil.example" })).status).toBe(403);
  });

  it("a JSON body is not a form: 400, nothing written", async () => {
    const { human, branchId } = await scene();
    const res = await exports.default.fetch(`${ORIGIN}/branches/${branchId}/comments`, {
      method: "POST",
      headers: { "content-type": "application/json", Origin: ORIGIN, Cookie: `${COOKIE}=${human.token}` },
      body: JSON.stringify({ content: "json" }),
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    expect(await commentsOf(branchId)).toEqual([]);
  });

  it("a form over 1 MiB is refused with the 413 page, as the API refuses such a body; nothing written", async () => {
    const { human, branchId } = await scene();
    const res = await post(`/branches/${branchId}/comments`, { content: "x".repeat(1024 * 1024 + 1) }, { session: human.token });
    expect(res.status).toBe(413);
    expect(res.text).toContain("<h1>Too large</h1>");
    expect(await commentsOf(branchId)).toEqual([]);
  });

  it("without a session a form sends one to log in (and back); a bad or expired cookie is dropped", async () => {
    const { branchId } = await scene();
    const res = await post(`/branches/${branchId}/segments`, { content: words(5) });
    expectSeeOther(res, `/login?next=${encodeURIComponent(`/branches/${branchId}`)}`);
    const forged = await get("/", "not.a.token");
    expect(forged.status).toBe(200);
    expect(forged.text).toContain('href="/login"');
    expect(forged.headers.get("set-cookie")).toMatch(new RegExp(`${COOKIE}=;.*Max-Age=0`));
    expect((await get("/stories/new")).location).toBe("/login?next=%2Fstories%2Fnew");
  });

  it("a bot's token is no web session, in the cookie or in an Authorization header", async () => {
    const bot = await registerBot();
    expect(shown(await get("/", bot.token))).not.toContain("Signed in as");
    const human = await registerHuman();
    for (const token of [bot.token, human.token]) {
      expect(shown(await get("/", { headers: { Authorization: `Bearer ${token}` } }))).not.toContain("Signed in as");
    }
  });

  it("a signed-in page's 304 stays private", async () => {
    const { human, branchId } = await scene();
    const first = await get(`/branches/${branchId}`, human.token);
    const res = await exports.default.fetch(`${ORIGIN}/branches/${branchId}`, {
      headers: { Cookie: `${COOKIE}=${human.token}`, "If-None-Match": first.headers.get("etag")!, "CF-Connecting-IP": address() },
    });
    expect(res.status).toBe(304);
    expect(res.headers.get("cache-control")).toBe("private, no-cache");
  });

  it("an unreadable form body is a 400 on the page, never a 500", async () => {
    const { human, branchId } = await scene();
    for (const [path, session] of [
      ["/login", undefined],
      [`/branches/${branchId}/comments`, human.token],
    ] as const) {
      const res = await exports.default.fetch(`${ORIGIN}${path}`, {
        method: "POST",
        headers: {
          "content-type": "multipart/form-data",
          Origin: ORIGIN,
          "CF-Connecting-IP": address(),
          ...(session ? { Cookie: `${COOKIE}=${session}` } : {}),
        },
        body: "--x\r\nbroken",
        redirect: "manual",
      });
      expect(res.status, path).toBe(400);
      expect(alertOf(await res.text())).toMatch(/could not be read/);
    }
  });

  it("no open redirect: `next` must be a path on this site", async () => {
    const human = await registerHuman();
    for (const next of [
      "//evil.example/x",
      "https://evil.example/",
      "/\\evil.example",
      "javascript:alert(1)",
      "/\t/evil.example/x",
      "/\n",
      "/\t\\evil.example",
    ]) {
      const res = await post(`/login?next=${encodeURIComponent(next)}`, { email: human.input.email, password: human.input.password });
      expectSeeOther(res, "/");
    }
    expectSeeOther(
      await post(`/login?next=${encodeURIComponent("/stories/new")}`, { email: human.input.email, password: human.input.password }),
      "/stories/new",
    );
  });

  it("no open redirect: a raw `next` whose dot segments resolve to `//host` (or that does not parse) goes home", async () => {
    const human = await registerHuman();
    const signIn = { email: human.input.email, password: human.input.password };
    for (const next of ["/.//evil.example", "/%2e//evil.example", "/a/..//evil.example", "/%2E%2E//evil.example", "/a/%2e%2e/.//evil.example", "//["]) {
      // As typed into the address bar: not encoded, so the query's own decoding applies.
      const res = await post(`/login?next=${next}`, signIn);
      expectSeeOther(res, "/");
    }
    const register = await post("/register?next=/.//evil.example", { username: unique("w"), email: `${unique("w")}@example.com`, password: "a good password" });
    expectSeeOther(register, "/");
    const page = await get("/login?next=/%2e//evil.example");
    expect(page.text).toContain('action="/login"');
  });

  it("the cookie is not an API credential", async () => {
    const human = await registerHuman();
    const res = await exports.default.fetch(`${ORIGIN}/api/v1/auth/me`, { headers: { Cookie: `${COOKIE}=${human.token}` } });
    expect(res.status).toBe(401);
  });

  it("failed web logins count against the same per-account limit as the API's", async () => {
    const human = await registerHuman();
    const limit = { env: { LIMIT_LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR: "10" } };
    for (let i = 0; i < 10; i++) expect((await post("/login", { email: human.input.email, password: `wrong ${i}` }, limit)).status).toBe(401);
    const locked = await post("/login", { email: human.input.email, password: human.input.password }, limit);
    expect(locked.status).toBe(429);
    expect(alertOf(locked.text)).toMatch(/^Limit reached: 10 per hour\. You can try again at .* UTC ?\.$/);
  });

  it("a stranger's failed web logins do not lock the owner out: the owner from another address signs in", async () => {
    const human = await registerHuman();
    const env = {
      LIMIT_LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR: "10",
      LIMIT_LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR: "100",
      LIMIT_LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: "50",
    };
    const from = (ip: string) => ({ env, headers: { "CF-Connecting-IP": ip } });
    for (let i = 0; i < 10; i++) expect((await post("/login", { email: human.input.email, password: `wrong ${i}` }, from("203.0.113.77"))).status).toBe(401);
    const locked = await post("/login", { email: human.input.email, password: human.input.password }, from("203.0.113.77"));
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(3500);
    expectSeeOther(await post("/login", { email: human.input.email, password: human.input.password }, from("198.51.100.9")), "/");
  });

  it("a bot writing in its turn and a human writing from the page share the branch (humans may write any time)", async () => {
    const { human, branchId } = await scene();
    const bot = await registerBot();
    expect((await join(bot.token, branchId)).status).toBe(201);
    expectSeeOther(await post(`/branches/${branchId}/segments`, { content: words(4, "human") }, { session: human.token }), /#s-/);
    expect((await submit(bot.token, branchId, words(4, "bot"))).status).toBe(201);
    const page = (await get(`/branches/${branchId}`, human.token)).text;
    expect(page).toContain(words(4, "human"));
    expect(page).toContain(words(4, "bot"));
    expect(page).toContain("Bots write here in turns; a human may write at any time.");
  });

  it("archived stories show no forms", async () => {
    const { owner, story, human, branchId } = await scene();
    expect((await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } })).status).toBe(200);
    const page = (await get(`/branches/${branchId}`, human.token)).text;
    expect(page).toContain("This story is archived: it can be read, not written.");
    expect(page).not.toContain('id="write-form"');
    const res = await post(`/branches/${branchId}/segments`, { content: words(5) }, { session: human.token });
    expect(res.status).toBe(403);
  });
});
