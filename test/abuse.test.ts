import { createExecutionContext, createScheduledController, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { BASE, call, countingReadLimiter, createStory, expectError, registerBot, registerHuman, storyWithSegments, uniqueAddress, words } from "./helpers";

/** Hardening, second round: each test here failed on the code before its fix. */

const cached = { READ_CACHE_MS: "60000" };

describe("the read cache never serves a private response", () => {
  it("percent-encoded private paths are not cached: an anonymous caller gets 401, never the victim's answer", async () => {
    const victim = await registerHuman();
    const bot = await registerBot();
    const token = (await call("/auth/api-token/generate", { method: "POST", token: victim.token })).body.token;
    const paths: [string, string][] = [
      ["/%61uth/me", token],
      ["/auth/%6De", token],
      ["/%6cogs", token],
      ["/logs/%73tats", token],
      [`/bots/${bot.id}/%77ebhook/deliveries`, bot.token],
      [`/bots/${bot.id}/webhook/%64eliveries`, bot.token],
    ];
    for (const [path, credential] of paths) {
      const mine = await call(path, { token: credential, env: cached });
      expect(mine.status, `${path}: ${mine.text}`).toBe(200);
      const theirs = await call(path, { env: cached });
      expect(theirs.status, `${path} served to anyone: ${theirs.text}`).toBe(401);
    }
  });

  it("public routes still cache, keyed on the route and query (an encoded path is the same read)", async () => {
    const { story } = await storyWithSegments();
    const first = await call(`/stories/${story.id}`, { env: cached });
    const encoded = await call(`/%73tories/${story.id}`, { env: cached });
    expect(encoded.headers.get("x-read-cache")).toBe("hit");
    expect(encoded.text).toBe(first.text);
  });
});

describe("only a credential that verifies skips the anonymous read limit", () => {
  it("a garbage X-API-Key or bearer is counted like no credential; a valid JWT is not counted", async () => {
    const { calls, counting } = countingReadLimiter();
    const ip = uniqueAddress();
    for (let i = 0; i < 15; i++) await call("/health", { headers: { "CF-Connecting-IP": ip, "X-API-Key": "garbage" }, env: { READ_LIMITER: counting } });
    for (let i = 0; i < 15; i++)
      await call("/health", { headers: { "CF-Connecting-IP": ip, Authorization: "Bearer nonsense" }, env: { READ_LIMITER: counting } });
    expect(calls).toHaveLength(3);
    const human = await registerHuman();
    for (let i = 0; i < 15; i++) await call("/health", { headers: { "CF-Connecting-IP": ip }, token: human.token, env: { READ_LIMITER: counting } });
    expect(calls).toHaveLength(3);
  });

  it("650 reads from 16 concurrent connections of one address let exactly the allowance through (±1 lease)", async () => {
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    const ip = { "CF-Connecting-IP": "203.0.113.250" };
    let next = 0;
    let passed = 0;
    const connection = async () => {
      while (next < 650) {
        next++;
        if ((await exports.default.fetch(`${BASE}/health`, { headers: ip })).status === 200) passed++;
      }
    };
    await Promise.all(Array.from({ length: 16 }, connection));
    expect(passed).toBeGreaterThanOrEqual(590);
    expect(passed).toBeLessThanOrEqual(610);
  }, 60_000);
});

describe("look-alike names are one account", () => {
  it.each([
    ["Émile", "émile"],
    ["E\u0301mile", "Émile"],
    ["Ünal", "üNAL"],
    ["Ｅｍｉｌｙ", "emily"],
    ["Straße", "STRASSE"],
    ["ΣΟΦΙΑ", "σοφια"],
  ])("%s and %s are the same username and the same bot name", async (a, b) => {
    const tag = crypto.randomUUID().slice(0, 6);
    const first = await call("/auth/register", { body: { username: `${a}${tag}`, email: `${tag}a@example.com`, password: "long enough", user_type: "human" } });
    expect(first.status, first.text).toBe(201);
    expect(first.body.user.username).toBe(`${a}${tag}`.normalize("NFC"));
    expectError(
      await call("/auth/register", { body: { username: `${b}${tag}`, email: `${tag}b@example.com`, password: "long enough", user_type: "human" } }),
      409,
      "CONFLICT",
    );
    expect((await call("/auth/bot/register", { body: { name: `${a}${tag}`, model: "m" } })).status).toBe(201);
    expectError(await call("/auth/bot/register", { body: { name: `${b}${tag}`, model: "m" } }), 409, "CONFLICT");
    const login = await call("/auth/bot/login-by-name", { body: { bot_name: `${b}${tag}`, master_key: "test-master-key" } });
    expect(login.body.bot.name).toBe(`${a}${tag}`.normalize("NFC"));
  });

  it.each([
    ["zero-width space", "Emi\u200Bly"],
    ["bidi override", "\u202Eylime"],
    ["control character", "Emi\u0007ly"],
    ["soft hyphen", "Emi\u00ADly"],
  ])("refuses a name with a %s (400)", async (_what, name) => {
    const err = expectError(await call("/auth/bot/register", { body: { name, model: "m" } }), 400, "VALIDATION_ERROR");
    expect(err.details.fields[0].field).toBe("name");
    expectError(
      await call("/auth/register", { body: { username: name, email: `${crypto.randomUUID()}@example.com`, password: "long enough", user_type: "human" } }),
      400,
      "VALIDATION_ERROR",
    );
  });
});

describe("costs nobody bounded", () => {
  it("rewrites and pins have hourly limits", async () => {
    const { owner, story, segments } = await storyWithSegments();
    const limits = { LIMIT_REWRITES_PER_HOUR: "2", LIMIT_PINS_PER_HOUR: "2" };
    for (let i = 0; i < 2; i++)
      expect((await call(`/segments/${segments[1].id}/rewrites`, { token: owner.token, body: { content: words(4) }, env: limits })).status).toBe(201);
    expectError(
      await call(`/segments/${segments[1].id}/rewrites`, { token: owner.token, body: { content: words(4) }, env: limits }),
      429,
      "RATE_LIMIT_EXCEEDED",
    );
    for (let i = 0; i < 2; i++)
      expect((await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "t", content: "c" }, env: limits })).status).toBe(201);
    expectError(await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "t", content: "c" }, env: limits }), 429, "RATE_LIMIT_EXCEEDED");
  });

  it("active pins are capped per story, on creation and on reactivation; inactive ones are not", async () => {
    const { owner, story } = await storyWithSegments();
    const cap = { LIMIT_ACTIVE_PINS_PER_STORY: "2" };
    const pin = (is_active: boolean) => call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "t", content: "c", is_active }, env: cap });
    const first = (await pin(true)).body.data;
    expect((await pin(true)).status).toBe(201);
    const err = expectError(await pin(true), 400, "VALIDATION_ERROR");
    expect(err.details.fields[0].field).toBe("is_active");
    const spare = (await pin(false)).body.data;
    expectError(
      await call(`/stories/${story.id}/pins/${spare.id}`, { method: "PATCH", token: owner.token, body: { is_active: true }, env: cap }),
      400,
      "VALIDATION_ERROR",
    );
    expect((await call(`/stories/${story.id}/pins/${first.id}`, { method: "PATCH", token: owner.token, body: { is_active: false }, env: cap })).status).toBe(
      200,
    );
    expect((await call(`/stories/${story.id}/pins/${spare.id}`, { method: "PATCH", token: owner.token, body: { is_active: true }, env: cap })).status).toBe(
      200,
    );
    expect((await call(`/stories/${story.id}`)).body.data.pins).toHaveLength(2);
  });

  it("summary regenerations are limited per account and per branch", async () => {
    const { owner, story } = await storyWithSegments();
    const other = await registerHuman();
    const limits = { LIMIT_SUMMARIES_PER_HOUR: "2", LIMIT_SUMMARIES_PER_BRANCH_PER_HOUR: "3" };
    const regen = (token: string, how: "post" | "get") =>
      how === "post"
        ? call(`/branches/${story.main_branch_id}/summary`, { method: "POST", token, env: limits })
        : call(`/branches/${story.main_branch_id}/summary?force_refresh=true`, { token, env: limits });
    expect((await regen(owner.token, "post")).status).toBe(200);
    expect((await regen(owner.token, "get")).status).toBe(200);
    expectError(await regen(owner.token, "post"), 429, "RATE_LIMIT_EXCEEDED");
    expect((await regen(other.token, "post")).status).toBe(200);
    const perBranch = expectError(await regen(other.token, "get"), 429, "RATE_LIMIT_EXCEEDED");
    expect(perBranch.details.limit).toBe("3 per hour");
    expect((await call(`/branches/${story.main_branch_id}/summary`, { env: limits })).status).toBe(200); // reading is free
  });

  it("registrations from IPv6 are counted by the /64: a subscriber cannot mint allowances by changing its interface id", async () => {
    const limits = { LIMIT_REGISTRATIONS_PER_ADDRESS_PER_HOUR: "1" };
    const from = (ip: string) =>
      call("/auth/bot/register", { body: { name: `v6${crypto.randomUUID().slice(0, 8)}`, model: "m" }, headers: { "CF-Connecting-IP": ip }, env: limits });
    expect((await from("2001:db8:77:1::1")).status).toBe(201);
    expectError(await from("2001:db8:77:1:ffff::2"), 429, "RATE_LIMIT_EXCEEDED");
    expect((await from("2001:db8:77:2::1")).status).toBe(201); // another /64
  });

  it("registrations are limited per client address", async () => {
    const ip = { "CF-Connecting-IP": "198.18.7.7" };
    const limits = { LIMIT_REGISTRATIONS_PER_ADDRESS_PER_HOUR: "2" };
    const bot = (i: number) =>
      call("/auth/bot/register", { body: { name: `reg${crypto.randomUUID().slice(0, 8)}${i}`, model: "m" }, headers: ip, env: limits });
    expect((await bot(1)).status).toBe(201);
    expect(
      (
        await call("/auth/register", {
          body: { username: `r${crypto.randomUUID().slice(0, 8)}`, email: `${crypto.randomUUID()}@example.com`, password: "long enough", user_type: "human" },
          headers: ip,
          env: limits,
        })
      ).status,
    ).toBe(201);
    const refused = await bot(3);
    expectError(refused, 429, "RATE_LIMIT_EXCEEDED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(
      (
        await call("/auth/bot/register", {
          body: { name: `reg${crypto.randomUUID().slice(0, 8)}`, model: "m" },
          headers: { "CF-Connecting-IP": "198.18.7.8" },
          env: limits,
        })
      ).status,
    ).toBe(201);
  });

  it("failed logins are limited per account and per address; successes count nothing", async () => {
    const human = await registerHuman();
    const limits = { LIMIT_LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR: "3", LIMIT_LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: "5" };
    const login = (password: string, ip: string) =>
      call("/auth/login", { body: { email: human.input.email, password }, headers: { "CF-Connecting-IP": ip }, env: limits });
    for (let i = 0; i < 4; i++) expect((await login("correct horse battery", "192.0.2.40")).status).toBe(200);
    for (let i = 0; i < 3; i++) expectError(await login("wrong guess", `192.0.2.${50 + i}`), 401, "UNAUTHORIZED");
    const refused = await login("correct horse battery", "192.0.2.60");
    expectError(refused, 429, "RATE_LIMIT_EXCEEDED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const ip = "192.0.2.70";
    for (let i = 0; i < 5; i++)
      expectError(await call("/auth/bot/login", { body: { api_key: `slk_guess${i}` }, headers: { "CF-Connecting-IP": ip }, env: limits }), 401, "UNAUTHORIZED");
    expectError(
      await call("/auth/bot/login", { body: { api_key: "slk_guess" }, headers: { "CF-Connecting-IP": ip }, env: limits }),
      429,
      "RATE_LIMIT_EXCEEDED",
    );
    const bot = await registerBot();
    for (let i = 0; i < 3; i++)
      expectError(
        await call("/auth/bot/login-by-name", {
          body: { bot_name: bot.name, master_key: "guess" },
          headers: { "CF-Connecting-IP": `192.0.2.${80 + i}` },
          env: limits,
        }),
        401,
        "UNAUTHORIZED",
      );
    expectError(
      await call("/auth/bot/login-by-name", {
        body: { bot_name: bot.name, master_key: "test-master-key" },
        headers: { "CF-Connecting-IP": "192.0.2.90" },
        env: limits,
      }),
      429,
      "RATE_LIMIT_EXCEEDED",
    );
  });

  it("a stranger's failed logins do not lock the owner out: 10 per (account, address) per hour, the owner elsewhere gets in", async () => {
    const human = await registerHuman();
    // The numbers of wrangler.toml (the test config lifts them).
    const limits = {
      LIMIT_LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR: "10",
      LIMIT_LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR: "100",
      LIMIT_LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: "50",
    };
    const login = (password: string, ip: string) =>
      call("/auth/login", { body: { email: human.input.email, password }, headers: { "CF-Connecting-IP": ip }, env: limits });
    const attacker = "203.0.113.66";
    for (let i = 0; i < 10; i++) expectError(await login(`guess ${i}`, attacker), 401, "UNAUTHORIZED");
    // The attacker's address is held to 10 guesses an hour on this account, even with the right password.
    for (const password of ["guess 10", human.input.password]) {
      const refused = await login(password, attacker);
      expect(expectError(refused, 429, "RATE_LIMIT_EXCEEDED").details).toMatchObject({ limit: "10 per hour" });
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500);
    }
    // The owner, from another address, is not locked out; and neither is another account from the attacker's.
    const owner = await login(human.input.password, "198.51.100.7");
    expect(owner.status, owner.text).toBe(200);
    const other = await registerHuman();
    const elsewhere = await call("/auth/login", {
      body: { email: other.input.email, password: other.input.password },
      headers: { "CF-Connecting-IP": attacker },
      env: limits,
    });
    expect(elsewhere.status, elsewhere.text).toBe(200);
  });

  it("the per-account backstop still locks the account after failures from many addresses", async () => {
    const human = await registerHuman();
    const limits = {
      LIMIT_LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR: "2",
      LIMIT_LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR: "5",
      LIMIT_LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: "50",
    };
    const login = (password: string, ip: string) =>
      call("/auth/login", { body: { email: human.input.email, password }, headers: { "CF-Connecting-IP": ip }, env: limits });
    for (const ip of ["203.0.113.1", "203.0.113.1", "203.0.113.2", "203.0.113.2", "203.0.113.3"]) expectError(await login("guess", ip), 401, "UNAUTHORIZED");
    const locked = await login(human.input.password, "198.51.100.8");
    expect(expectError(locked, 429, "RATE_LIMIT_EXCEEDED").details).toMatchObject({ limit: "5 per hour" });
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("a write to a branch that does not exist leaves no room behind", async () => {
    const human = await registerHuman();
    const id = crypto.randomUUID();
    expectError(await call(`/branches/${id}/segments`, { token: human.token, body: { content: words(4) } }), 404, "NOT_FOUND");
    const left = await runInDurableObject(env.BRANCH_ROOM.get(env.BRANCH_ROOM.idFromName(id)), async (_r, state) => ({
      keys: (await state.storage.list()).size,
      alarm: await state.storage.getAlarm(),
      tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\'").toArray(),
    }));
    expect(left).toEqual({ keys: 0, alarm: null, tables: [] });
  });

  it("webhook deliveries and their attempts are pruned after 7 days", async () => {
    const bot = await registerBot();
    const old = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const recent = new Date().toISOString();
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO webhook_deliveries (id, bot_id, event, body, status, attempts, created_at, updated_at) VALUES (?, ?, 'your_turn', '{}', 'delivered', 1, ?, ?), (?, ?, 'your_turn', '{}', 'delivered', 1, ?, ?)",
      ).bind(a, bot.id, old, old, b, bot.id, recent, recent),
      env.DB.prepare(
        "INSERT INTO webhook_attempts (id, delivery_id, attempt, status_code, duration_ms, created_at) VALUES (?, ?, 1, 200, 5, ?), (?, ?, 1, 200, 5, ?)",
      ).bind(crypto.randomUUID(), a, old, crypto.randomUUID(), b, recent),
    ]);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController(), env, ctx);
    await waitOnExecutionContext(ctx);
    const left = await env.DB.prepare("SELECT d.id FROM webhook_deliveries d WHERE d.bot_id = ?").bind(bot.id).all();
    expect(left.results).toEqual([{ id: b }]);
    const attempts = await env.DB.prepare("SELECT delivery_id FROM webhook_attempts WHERE delivery_id IN (?, ?)").bind(a, b).all();
    expect(attempts.results).toEqual([{ delivery_id: b }]);
  });
});

describe("a reply never outlives its parent", () => {
  it("30 replies racing the parent's deletion leave no reply pointing at a missing comment", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const branch = story.main_branch_id;
    const parent = (await call(`/branches/${branch}/comments`, { token: human.token, body: { content: "parent" } })).body.data;
    const replies = Array.from({ length: 30 }, (_, i) =>
      call(`/branches/${branch}/comments`, { token: human.token, body: { content: `reply ${i}`, parent_comment_id: parent.id } }),
    );
    const results = await Promise.all([
      ...replies.slice(0, 10),
      call(`/comments/${parent.id}`, { method: "DELETE", token: human.token }),
      ...replies.slice(10),
    ]);
    for (const r of results) expect([200, 201, 400]).toContain(r.status);
    const orphans = await env.DB.prepare(
      "SELECT count(*) AS n FROM comments c WHERE c.branch_id = ? AND c.parent_comment_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM comments p WHERE p.id = c.parent_comment_id)",
    )
      .bind(branch)
      .first<{ n: number }>();
    expect(orphans!.n).toBe(0);
  });
});

describe("the webhook address guard", () => {
  it.each([
    "http://[::7f00:1]/",
    "http://[64:ff9b::a00:1]/",
    "http://[2002:a00:1::]/",
    "http://[fec0::1]/",
    "http://[ff02::1]/",
    "http://192.0.0.1/",
    "http://198.18.0.1/",
  ])("refuses %s at registration and on PUT", async (url) => {
    expectError(
      await call("/auth/bot/register", { body: { name: `g${crypto.randomUUID().slice(0, 8)}`, model: "m", webhook_url: url } }),
      400,
      "VALIDATION_ERROR",
    );
    const bot = await registerBot();
    expectError(await call(`/bots/${bot.id}/webhook`, { method: "PUT", token: bot.token, body: { webhook_url: url } }), 400, "VALIDATION_ERROR");
  });
});
