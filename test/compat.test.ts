import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { adminInsertSql } from "../scripts/admin-sql";
import { BASE, call, createBranch, createStory, expectError, join, registerBot, registerHuman, storyWithSegments, submit, unique, words } from "./helpers";

/** Existing bot clients (older services' Node and Python SDKs) work unchanged: what they send, byte for byte. */

/** A raw request as an SDK sends it: `Content-Type: application/json` and no body at all. */
const sdkPost = (path: string, token: string, init: { body?: string; contentType?: string | null } = {}) =>
  exports.default
    .fetch(`${BASE}${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, ...(init.contentType === null ? {} : { "Content-Type": init.contentType ?? "application/json" }) },
      body: init.body,
    })
    .then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json<any>() }));

describe("bodies whose fields are all optional may be absent or empty", () => {
  it("joins with Content-Type: application/json and an empty body, as the SDKs send it", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    const res = await sdkPost(`/branches/${story.main_branch_id}/join`, bot.token);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ role: "narrator", your_turn_order: 1 });
  });

  it.each([
    { name: "no body, no content type", body: undefined, contentType: null, role: "narrator" },
    { name: "{} without a content type", body: "{}", contentType: null, role: "narrator" },
    { name: "whitespace with a JSON content type", body: "  \n", contentType: "application/json", role: "narrator" },
    { name: "a role without a content type", body: '{"role":"voice"}', contentType: null, role: "voice" },
    { name: "a role as text/plain", body: '{"role":"challenger"}', contentType: "text/plain", role: "challenger" },
  ])("joins with $name", async ({ body, contentType, role }) => {
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    const res = await sdkPost(`/branches/${story.main_branch_id}/join`, bot.token, { body, contentType });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.role).toBe(role);
  });

  it("still refuses a malformed body or a bad role with 400", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    expectError({ ...(await sdkPost(`/branches/${story.main_branch_id}/join`, bot.token, { body: "{nope" })), text: "" }, 400, "VALIDATION_ERROR");
    expectError({ ...(await sdkPost(`/branches/${story.main_branch_id}/join`, bot.token, { body: '{"role":"villain"}' })), text: "" }, 400, "VALIDATION_ERROR");
  });

  it("leaves, summarises and generates an API token with an empty JSON body", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    expect((await sdkPost(`/branches/${story.main_branch_id}/join`, bot.token)).status).toBe(201);
    expect((await sdkPost(`/branches/${story.main_branch_id}/leave`, bot.token)).status).toBe(200);
    expect((await sdkPost(`/branches/${story.main_branch_id}/summary`, bot.token)).status).toBe(200);
    const human = await registerHuman();
    expect((await sdkPost("/auth/api-token/generate", human.token)).status).toBe(200);
  });

  it("marks the join body as not required in the OpenAPI document", async () => {
    const doc = (await call("/openapi.json")).body;
    expect(doc.paths["/branches/{branch_id}/join"].post.requestBody.required).toBe(false);
  });
});

describe("boolean query parameters in any letter case", () => {
  it("accepts force_refresh=True as Python's requests writes it, and TRUE/1/False elsewhere", async () => {
    const { owner, story } = await storyWithSegments();
    const refreshed = await call(`/branches/${story.main_branch_id}/summary?force_refresh=True`, { token: owner.token });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.data.summary).toEqual(expect.any(String));
    expect((await call(`/stories/${story.id}/branches?include_all=TRUE`)).status).toBe(200);
    expect((await call(`/stories/${story.id}/pins?include_inactive=False`)).status).toBe(200);
    expect((await call(`/stories/${story.id}/pins?include_inactive=1`)).status).toBe(200);
    expectError(await call(`/stories/${story.id}/pins?include_inactive=yes`), 400, "VALIDATION_ERROR");
  });
});

describe("a created comment is where older clients read it", () => {
  it("is nested as data.comment, with its fields also at the top of data", async () => {
    const { story } = await storyWithSegments();
    const human = await registerHuman();
    const res = await sdkPost(`/branches/${story.main_branch_id}/comments`, human.token, { body: JSON.stringify({ content: "Nice turn." }) });
    expect(res.status).toBe(201);
    expect(res.body.data.comment.id).toBe(res.body.data.id);
    expect(res.body.data.comment).toMatchObject({ content: "Nice turn.", author_id: human.id, branch_id: story.main_branch_id });
  });
});

describe("unknown bot ids on the bot-only routes are 404 for any credential", () => {
  it("PUT webhook and the deliveries list: 404 for an unknown or malformed id, 403 for an existing bot that is not the caller", async () => {
    const bot = await registerBot();
    const other = await registerBot();
    const human = await registerHuman();
    for (const id of [crypto.randomUUID(), "not-a-uuid"]) {
      for (const token of [bot.token, human.token]) {
        expectError(await call(`/bots/${id}/webhook`, { method: "PUT", token, body: { webhook_url: "https://receiver.test/x" } }), 404, "NOT_FOUND");
        expectError(await call(`/bots/${id}/webhook/deliveries`, { token }), 404, "NOT_FOUND");
      }
    }
    expectError(
      await call(`/bots/${other.id}/webhook`, { method: "PUT", token: bot.token, body: { webhook_url: "https://receiver.test/x" } }),
      403,
      "PERMISSION_DENIED",
    );
    expectError(await call(`/bots/${other.id}/webhook/deliveries`, { token: human.token }), 403, "FORBIDDEN");
  });
});

describe("is_starter opens a branch", () => {
  async function forkWithoutSegments() {
    const { owner, story } = await storyWithSegments({ min_length: 5 });
    const branch = await createBranch(owner.token, story.id);
    return { owner, story, branch };
  }

  it("is accepted from the branch's creator while it has no segments of its own, exempt from min_length", async () => {
    const { owner, branch } = await forkWithoutSegments();
    const res = await call(`/branches/${branch.id}/segments`, { token: owner.token, body: { content: "Short opening.", is_starter: true } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ is_starter: true, sequence_order: 5 });
    const log = await env.DB.prepare("SELECT is_continuation FROM logs WHERE segment_id = ?").bind(res.body.data.id).first();
    expect(log).toEqual({ is_continuation: "fork" });
    const again = expectError(
      await call(`/branches/${branch.id}/segments`, { token: owner.token, body: { content: "Another.", is_starter: true } }),
      400,
      "VALIDATION_ERROR",
    );
    expect(again.details.fields[0].field).toBe("is_starter");
  });

  it("is refused (400 naming is_starter) for anyone else, but an admin may", async () => {
    const { branch } = await forkWithoutSegments();
    const stranger = await registerHuman();
    const err = expectError(
      await call(`/branches/${branch.id}/segments`, { token: stranger.token, body: { content: "Mine now.", is_starter: true } }),
      400,
      "VALIDATION_ERROR",
    );
    expect(err.details.fields.map((f: any) => f.field)).toEqual(["is_starter"]);
    const email = `${unique("root")}@example.com`;
    await env.DB.exec((await adminInsertSql({ username: unique("root"), email, password: "admin password" })).sql);
    const admin = (await call("/auth/login", { body: { email, password: "admin password" } })).body.access_token;
    expect((await call(`/branches/${branch.id}/segments`, { token: admin, body: { content: "Admin opening.", is_starter: true } })).status).toBe(201);
  });

  it("is not exempt from max_length, is_starter: false is always accepted, and the turn rules still apply", async () => {
    const { owner, story, branch } = await forkWithoutSegments();
    expectError(await call(`/branches/${branch.id}/segments`, { token: owner.token, body: { content: words(60), is_starter: true } }), 422, "SEGMENT_TOO_LONG");
    expect((await call(`/branches/${story.main_branch_id}/segments`, { token: owner.token, body: { content: words(6), is_starter: false } })).status).toBe(201);
    const creator = await registerBot();
    const fork = await createBranch(creator.token, story.id);
    const first = await registerBot();
    await join(first.token, fork.id);
    await join(creator.token, fork.id);
    expectError(await call(`/branches/${fork.id}/segments`, { token: creator.token, body: { content: "Too early.", is_starter: true } }), 403, "NOT_YOUR_TURN");
  });
});

describe("in turn mode the queue paces the branch", () => {
  const SPEC_SEGMENTS = { LIMIT_SEGMENTS_PER_HOUR: "20", LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR: "2", LIMIT_SEGMENTS_PER_DAY: "100" };

  it("two queued bots write six segments each on one branch: the per-branch limit does not apply at one's turn", async () => {
    const { owner, story } = await storyWithSegments();
    const bots = [await registerBot(), await registerBot()];
    for (const b of bots) await join(b.token, story.main_branch_id);
    for (let i = 0; i < 12; i++) {
      const res = await call(`/branches/${story.main_branch_id}/segments`, { token: bots[i % 2].token, body: { content: words(4) }, env: SPEC_SEGMENTS });
      expect(res.status, res.text).toBe(201);
    }
    // A person is held to the account-wide limits only: three in a row on the same branch.
    for (let i = 0; i < 3; i++)
      expect((await call(`/branches/${story.main_branch_id}/segments`, { token: owner.token, body: { content: words(4) }, env: SPEC_SEGMENTS })).status).toBe(
        201,
      );
  });

  it("a bot outside turn mode is held to the per-branch limit: its third segment on one branch in the hour is 429", async () => {
    const { owner, story } = await storyWithSegments();
    const fork = await createBranch(owner.token, story.id);
    const bot = await registerBot();
    const write = () => call(`/branches/${fork.id}/segments`, { token: bot.token, body: { content: words(4) }, env: SPEC_SEGMENTS });
    for (let i = 0; i < 2; i++) expect((await write()).status).toBe(201);
    expect(expectError(await write(), 429, "RATE_LIMIT_EXCEEDED").details.limit).toBe("2 per hour");
  });

  it("a bot refused by a limit at its own turn loses the turn at once, and the next bot is told", async () => {
    const { story } = await storyWithSegments();
    const first = await registerBot();
    const second = await registerBot({ webhook_url: "https://receiver.test/next" });
    await join(first.token, story.main_branch_id);
    await join(second.token, story.main_branch_id);
    const oneAnHour = { ...SPEC_SEGMENTS, LIMIT_SEGMENTS_PER_HOUR: "0" };
    const err = expectError(
      await call(`/branches/${story.main_branch_id}/segments`, { token: first.token, body: { content: words(4) }, env: oneAnHour }),
      429,
      "RATE_LIMIT_EXCEEDED",
    );
    expect(err.details).toMatchObject({ turn_passed: true, next_bot: { id: second.id, name: second.name } });
    expect((await call(`/branches/${story.main_branch_id}`)).body.data.queue.current_turn.bot_id).toBe(second.id);
    const told = await env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE bot_id = ? AND event = 'your_turn'").bind(second.id).first<{ n: number }>();
    expect(told!.n).toBe(1);
    expect((await submit(second.token, story.main_branch_id, words(4))).status).toBe(201);
  });

  it("NOT_YOUR_TURN carries Retry-After equal to estimated_wait", async () => {
    const { story } = await storyWithSegments();
    const bots = [await registerBot(), await registerBot()];
    for (const b of bots) await join(b.token, story.main_branch_id);
    const res = await submit(bots[1].token, story.main_branch_id, words(4));
    const err = expectError(res, 403, "NOT_YOUR_TURN");
    expect(res.headers.get("retry-after")).toBe(String(err.details.estimated_wait));
  });
});

describe("headers a browser client needs", () => {
  it("exposes them through CORS, and an idempotent replay keeps the rate-limit and bookmark headers", async () => {
    const res = await call("/stories", { method: "OPTIONS", headers: { Origin: "https://app.test", "Access-Control-Request-Method": "POST" } });
    const exposed = (await call("/health", { headers: { Origin: "https://app.test" } })).headers.get("access-control-expose-headers")!.toLowerCase();
    for (const h of [
      "x-ratelimit-limit",
      "x-ratelimit-remaining",
      "x-ratelimit-reset",
      "idempotent-replayed",
      "retry-after",
      "etag",
      "server-timing",
      "x-d1-bookmark",
      "x-request-id",
    ]) {
      expect(exposed).toContain(h);
    }
    expect(res.status).toBeLessThan(300);
    const human = await registerHuman();
    const story = await createStory(human.token);
    const send = () =>
      call(`/branches/${story.main_branch_id}/comments`, {
        token: human.token,
        body: { content: "once" },
        headers: { "Idempotency-Key": "k-1" },
        env: { LIMIT_COMMENTS_PER_HOUR: "10" },
      });
    const first = await send();
    const again = await send();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-ratelimit-limit")).toBe("10");
    expect(again.headers.get("x-ratelimit-remaining")).toBe(first.headers.get("x-ratelimit-remaining"));
    // At least the first answer's position (it includes the write): a JWT's replay first reads its standing,
    // which may answer a newer one. Bookmarks are fixed-width hex groups, so they compare as text.
    const [bookmark, firstBookmark] = [again.headers.get("x-d1-bookmark"), first.headers.get("x-d1-bookmark")];
    expect(firstBookmark).toBeTruthy();
    expect(bookmark! >= firstBookmark!, `${bookmark} >= ${firstBookmark}`).toBe(true);
  });
});

describe("InkPath's own server paths (its auth routes mounted at /api/v1)", () => {
  it("POST /bot/login answers as POST /auth/bot/login: the token, the bot, and the same errors", async () => {
    const bot = await registerBot();
    const res = await call("/bot/login", { body: { api_key: bot.apiKey } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      message: "Login successful",
      access_token: expect.any(String),
      bot: { id: bot.id, name: bot.name, model: "test-model", status: "active" },
    });
    expect((await call("/auth/me", { token: res.body.access_token })).body).toMatchObject({ id: bot.id, user_type: "bot" });
    expectError(await call("/bot/login", { body: { api_key: "slk_not-a-key" } }), 401, "UNAUTHORIZED");
    expect(expectError(await call("/bot/login", { body: {} }), 400, "VALIDATION_ERROR").details.fields[0].field).toBe("api_key");
  });

  it("POST /bot/login-by-name answers as POST /auth/bot/login-by-name, with the same errors", async () => {
    const bot = await registerBot();
    const res = await call("/bot/login-by-name", { body: { bot_name: bot.name, master_key: "test-master-key" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ message: "Login successful", access_token: expect.any(String), bot: { id: bot.id, name: bot.name } });
    expectError(await call("/bot/login-by-name", { body: { bot_name: bot.name, master_key: "wrong" } }), 401, "UNAUTHORIZED");
    expectError(await call("/bot/login-by-name", { body: { bot_name: unique("nobody"), master_key: "test-master-key" } }), 404, "NOT_FOUND");
    expectError(await call("/bot/login-by-name", { body: { bot_name: bot.name } }), 400, "VALIDATION_ERROR");
    expectError(
      await call("/bot/login-by-name", { body: { bot_name: bot.name, master_key: "test-master-key" }, env: { MASTER_KEY: undefined } }),
      403,
      "FORBIDDEN",
    );
  });

  it("the aliases share the failed-login limits with the paths they alias", async () => {
    const bot = await registerBot();
    const ip = "192.0.2.230";
    const env = { LIMIT_LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: "2", LIMIT_LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR: "2" };
    const headers = { "CF-Connecting-IP": ip };
    expectError(await call("/auth/bot/login", { body: { api_key: "slk_guess1" }, headers, env }), 401, "UNAUTHORIZED");
    expectError(await call("/bot/login", { body: { api_key: "slk_guess2" }, headers, env }), 401, "UNAUTHORIZED");
    const refused = await call("/bot/login", { body: { api_key: bot.apiKey }, headers, env });
    expectError(refused, 429, "RATE_LIMIT_EXCEEDED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expectError(await call("/auth/bot/login", { body: { api_key: bot.apiKey }, headers, env }), 429, "RATE_LIMIT_EXCEEDED");
  });

  it("the OpenAPI document lists them as deprecated aliases, and the spec's paths as current", async () => {
    const doc = (await call("/openapi.json")).body;
    for (const [alias, path] of [
      ["/bot/login", "/auth/bot/login"],
      ["/bot/login-by-name", "/auth/bot/login-by-name"],
    ]) {
      expect(doc.paths[alias].post.deprecated, alias).toBe(true);
      expect(doc.paths[alias].post.description).toContain(path);
      expect(doc.paths[path].post.deprecated, path).toBeUndefined();
      expect(doc.paths[alias].post.requestBody).toEqual(doc.paths[path].post.requestBody);
      expect(Object.keys(doc.paths[alias].post.responses).sort()).toEqual(Object.keys(doc.paths[path].post.responses).sort());
    }
  });
});

describe("InkPath's GET /branches/{id}/next-bot", () => {
  const nextBot = (branchId: string) => call(`/branches/${branchId}/next-bot`);
  const limited = (token: string, branchId: string) =>
    call(`/branches/${branchId}/segments`, { token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } });

  it("answers the bot whose turn it is, as next_bot and as InkPath's bot, to anyone; never a bot sitting out; null when none", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    expect((await nextBot(branch)).body.data).toEqual({
      branch_id: branch,
      next_bot: null,
      bot: null,
      queue_length: 0,
      resumes_at: null,
      message: "No bot is queued on this branch",
    });
    const [a, b] = [await registerBot({ model: "model-a" }), await registerBot({ model: "model-b" })];
    await join(a.token, branch);
    await join(b.token, branch, "voice");
    const first = await nextBot(branch);
    expect(first.status).toBe(200);
    const deadline = (await call(`/branches/${branch}`)).body.data.queue.current_turn.deadline;
    const holderA = { id: a.id, name: a.name, model: "model-a", role: "narrator", your_turn_order: 1, deadline };
    expect(first.body.data).toEqual({ branch_id: branch, next_bot: holderA, bot: holderA, queue_length: 2, resumes_at: null, message: null });
    // a is refused by its limit at its turn: it sits out, and b writes next.
    const aBack = expectError(await limited(a.token, branch), 429, "RATE_LIMIT_EXCEEDED").details.sits_out_until;
    expect((await nextBot(branch)).body.data.next_bot).toMatchObject({ id: b.id, model: "model-b", role: "voice", your_turn_order: 2 });
    // b too: every queued bot sits out, nobody writes next until a is back.
    expectError(await limited(b.token, branch), 429, "RATE_LIMIT_EXCEEDED");
    const resumesAt = (await call(`/branches/${branch}`)).body.data.queue.resumes_at;
    expect(resumesAt).toBe(aBack); // a comes back first
    expect((await nextBot(branch)).body.data).toEqual({
      branch_id: branch,
      next_bot: null,
      bot: null,
      queue_length: 2,
      resumes_at: resumesAt,
      message: `Every queued bot sits out until ${resumesAt} (a limit refused it at its turn)`,
    });
  });

  it("is 404 for an unknown, malformed or hidden branch, in one D1 round trip", async () => {
    const { story } = await storyWithSegments();
    const res = await nextBot(story.main_branch_id);
    expect(res.headers.get("server-timing")).toMatch(/^d1;desc="1 round trip"/);
    expectError(await nextBot(crypto.randomUUID()), 404, "NOT_FOUND");
    expectError(await nextBot("nope"), 404, "NOT_FOUND");
    await env.DB.prepare("UPDATE branches SET hidden_at = ? WHERE id = ?").bind(new Date().toISOString(), story.main_branch_id).run();
    expectError(await nextBot(story.main_branch_id), 404, "NOT_FOUND");
  });

  it("is a deprecated alias in the OpenAPI document, pointing at GET /branches/{branch_id}", async () => {
    const doc = (await call("/openapi.json")).body;
    const op = doc.paths["/branches/{branch_id}/next-bot"].get;
    expect(op.deprecated).toBe(true);
    expect(op.description).toContain("GET /branches/{branch_id}");
    expect(op.security).toEqual(doc.paths["/branches/{branch_id}"].get.security); // public, as the read it aliases
    expect(doc.paths["/branches/{branch_id}"].get.deprecated).toBeUndefined();
  });
});
