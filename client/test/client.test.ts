import { describe, expect, it } from "vitest";
import { contentLength as serverLength } from "../../src/domain/shared/length";
import { signJwt } from "../../src/lib/jwt";
import { BASE, createStory, join, registerBot, registerHuman, words } from "../../test/helpers";
import { StoryloomError, contentLength, createStoryloomClient, unwrap } from "../src";
import { workerFetch, workerFetchWith } from "./helpers";

describe("credentials", () => {
  it("logs in with the bot key when it first needs a token", async () => {
    const bot = await registerBot();
    const tokens: string[] = [];
    const client = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, apiKey: bot.apiKey, onToken: (t) => tokens.push(t) });
    expect(client.token).toBe(null);
    const me = unwrap(await client.api.GET("/auth/me"));
    expect(me).toMatchObject({ id: bot.id, name: bot.name, user_type: "bot" });
    expect(tokens).toEqual([client.token]);
    expect(client.token).toMatch(/^ey/);
  });

  it("on AUTH_EXPIRED_TOKEN logs in again and sends the call once more, body included", async () => {
    const bot = await registerBot();
    const story = await createStory((await registerHuman()).token);
    const expired = await signJwt({ id: bot.id, type: "bot", name: bot.name }, "test-jwt-secret", 60, Math.floor(Date.now() / 1000) - 7200);
    const retries: string[] = [];
    const client = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, apiKey: bot.apiKey, token: expired, onRetry: (r) => retries.push(r.reason) });
    const joined = await client.api.POST("/branches/{branch_id}/join", { params: { path: { branch_id: story.main_branch_id } }, body: { role: "voice" } });
    expect(joined.response.status).toBe(201);
    expect(unwrap(joined)).toMatchObject({ bot_id: bot.id, role: "voice", your_turn_order: 1 });
    expect(retries).toEqual(["token_expired"]);
    expect(client.token).not.toBe(expired);
  });

  it("without a key an expired token's 401 comes back as it is", async () => {
    const bot = await registerBot();
    const expired = await signJwt({ id: bot.id, type: "bot", name: bot.name }, "test-jwt-secret", 60, Math.floor(Date.now() / 1000) - 7200);
    const client = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, token: expired });
    const res = await client.api.GET("/auth/me");
    expect(res.response.status).toBe(401);
    expect(() => unwrap(res)).toThrow(StoryloomError);
    try {
      unwrap(res);
    } catch (e) {
      expect((e as StoryloomError).code).toBe("AUTH_EXPIRED_TOKEN");
    }
  });
});

describe("429 and Retry-After", () => {
  const storyBody = () => ({
    title: `S ${crypto.randomUUID().slice(0, 8)}`,
    background: "A town by the sea.",
    starter: "Go.",
    initial_segments: [words(3), words(3), words(3)],
    language: "en",
    min_length: 1,
    max_length: 50,
  });

  it("waits Retry-After and sends again when the wait is short", async () => {
    const human = await registerHuman();
    let refused = 0;
    const calls: number[] = [];
    // The outside world answers the first attempt 429 (as a proxy or a busy instance may); then the Worker does.
    const fetch = async (req: Request) => {
      calls.push(Date.now());
      if (refused++ === 0)
        return new Response(JSON.stringify({ status: "error", error: { code: "RATE_LIMIT_EXCEEDED", message: "slow down" } }), {
          status: 429,
          headers: { "Retry-After": "1" },
        });
      return workerFetch(req);
    };
    const retries: number[] = [];
    const client = createStoryloomClient({ baseUrl: BASE, fetch, token: human.token, onRetry: (r) => retries.push(r.waitMs) });
    const res = await client.api.POST("/stories", { body: storyBody() });
    expect(res.response.status).toBe(201);
    expect(retries).toEqual([1000]);
    expect(calls[1] - calls[0]).toBeGreaterThanOrEqual(990);
  });

  it("gives up after `retries` attempts, answering the last 429", async () => {
    let calls = 0;
    const fetch = async () => {
      calls++;
      return new Response("{}", { status: 429, headers: { "Retry-After": "0" } });
    };
    const client = createStoryloomClient({ baseUrl: BASE, fetch, token: "t", rateLimit: { retries: 2 } });
    expect((await client.api.GET("/stories")).response.status).toBe(429);
    expect(calls).toBe(3);
  });

  it("returns the service's own 429 at once when its Retry-After is longer than maxWaitSeconds", async () => {
    const human = await registerHuman();
    const retries: unknown[] = [];
    const client = createStoryloomClient({
      baseUrl: BASE,
      fetch: workerFetchWith({ LIMIT_STORIES_PER_HOUR: "1" }),
      token: human.token,
      onRetry: (r) => retries.push(r),
    });
    expect((await client.api.POST("/stories", { body: storyBody() })).response.status).toBe(201);
    const started = Date.now();
    const refused = await client.api.POST("/stories", { body: storyBody() });
    expect(refused.response.status).toBe(429);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(retries).toEqual([]);
    try {
      unwrap(refused);
      expect.unreachable();
    } catch (e) {
      const err = e as StoryloomError;
      expect(err.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(err.retryAfter).toBeGreaterThan(3000);
    }
  });

  it("NOT_YOUR_TURN (403 with Retry-After) is not retried; its wait is on the error", async () => {
    const story = await createStory((await registerHuman()).token);
    const [a, b] = [await registerBot(), await registerBot()];
    await join(a.token, story.main_branch_id);
    await join(b.token, story.main_branch_id);
    const client = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, apiKey: b.apiKey });
    const res = await client.api.POST("/branches/{branch_id}/segments", { params: { path: { branch_id: story.main_branch_id } }, body: { content: words(5) } });
    expect(res.response.status).toBe(403);
    try {
      unwrap(res);
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: "NOT_YOUR_TURN", details: { current_turn: a.id, your_bot_id: b.id } });
      expect((e as StoryloomError).retryAfter).toBeGreaterThan(0);
    }
  });
});

it("contentLength counts as the service does", () => {
  const samples: [string, string][] = [
    ["one two  three\nfour\tfive", "en"],
    ["  leading and trailing  ", "fr"],
    ["故事 的 开始。", "zh"],
    ["物語の\n始まり", "ja-JP"],
    ["이야기 시작", "ko"],
    ["emoji 🧵 count", "en"],
    ["🧵🧵 故事", "zh-Hant"],
    ["", "en"],
  ];
  for (const [text, lang] of samples) expect(contentLength(text, lang), `${lang}: ${text}`).toBe(serverLength(text, lang));
});
