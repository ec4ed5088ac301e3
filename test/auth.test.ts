import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { adminInsertSql } from "../scripts/admin-sql";
import { app } from "../src/app";
import { base64url, fromBase64url, hmacSha256 } from "../src/lib/crypto";
import { signJwt } from "../src/lib/jwt";
import { PBKDF2_ITERATIONS } from "../src/lib/password";
// The file about registration and passwords: its humans register through the API, paying the real 100,000 iterations.
import { BASE, call, expectError, registerBot, registerHumanByApi as registerHuman, unique } from "./helpers";

const b64json = (v: unknown) => base64url(new TextEncoder().encode(JSON.stringify(v)));
async function forge(header: object, payload: object, secret = "test-jwt-secret") {
  const unsigned = `${b64json(header)}.${b64json(payload)}`;
  return `${unsigned}.${base64url(await hmacSha256(secret, unsigned))}`;
}
const now = () => Math.floor(Date.now() / 1000);

describe("POST /auth/register", () => {
  it("creates a human and returns plain top-level members", async () => {
    const { input, ...res } = await registerHuman();
    expect(res.message).toEqual(expect.any(String));
    expect(res.user).toEqual({ id: expect.any(String), username: input.username, email: input.email, user_type: "human" });
    expect(res.user.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.access_token.split(".")).toHaveLength(3);
    expect(res).not.toHaveProperty("status");
  });

  it("names every missing field in one 400 VALIDATION_ERROR", async () => {
    const err = expectError(await call("/auth/register", { body: {} }), 400, "VALIDATION_ERROR");
    for (const f of ["username", "email", "password", "user_type"]) expect(err.message).toContain(f);
    expect(err.details.fields.map((f: any) => f.field).sort()).toEqual(["email", "password", "user_type", "username"]);
  });

  it("refuses user_type admin, a short password, a bad email and a non-string or empty username with 400 naming the field", async () => {
    const base = { username: unique(), email: `${unique()}@x.io`, password: "longenough", user_type: "human" };
    const cases: [Record<string, unknown>, string][] = [
      [{ user_type: "admin" }, "user_type"],
      [{ password: "short" }, "password"],
      [{ email: "not-an-email" }, "email"],
      [{ username: 12345 }, "username"],
      [{ username: "" }, "username"],
    ];
    for (const [patch, field] of cases) {
      const err = expectError(await call("/auth/register", { body: { ...base, ...patch } }), 400, "VALIDATION_ERROR");
      expect(err.details.fields.map((f: any) => f.field)).toContain(field);
    }
  });

  it("answers malformed JSON, non-JSON bodies and arrays with 400, never 500", async () => {
    const json = { "Content-Type": "application/json" };
    expectError(await call("/auth/register", { rawBody: "{not json", headers: json }), 400, "VALIDATION_ERROR");
    expectError(await call("/auth/register", { rawBody: "", headers: json }), 400, "VALIDATION_ERROR");
    expectError(await call("/auth/register", { rawBody: "[1,2]", headers: json }), 400, "VALIDATION_ERROR");
    expectError(await call("/auth/register", { rawBody: "null", headers: json }), 400, "VALIDATION_ERROR");
    expectError(await call("/auth/register", { rawBody: "username=x", headers: { "Content-Type": "text/plain" } }), 400, "VALIDATION_ERROR");
    expectError(await call("/auth/login", { method: "POST" }), 400, "VALIDATION_ERROR");
  });

  it("treats email and username as unique case-insensitively (409 CONFLICT)", async () => {
    const first = await registerHuman();
    const sameEmail = await call("/auth/register", {
      body: { ...first.input, username: unique(), email: first.input.email.toUpperCase() },
    });
    expect(expectError(sameEmail, 409, "CONFLICT").details.field).toBe("email");
    const sameName = await call("/auth/register", {
      body: { ...first.input, username: first.input.username.toUpperCase(), email: `${unique()}@x.io` },
    });
    expect(expectError(sameName, 409, "CONFLICT").details.field).toBe("username");
  });

  it("stores PBKDF2-SHA-256 at exactly the production cap of 100,000 iterations", async () => {
    expect(PBKDF2_ITERATIONS).toBe(100_000);
    const { id } = await registerHuman();
    const row = await env.DB.prepare("SELECT password_hash FROM users WHERE id = ?").bind(id).first<{ password_hash: string }>();
    const [scheme, iterations, salt] = row!.password_hash.split("$");
    expect(scheme).toBe("pbkdf2-sha256");
    expect(Number(iterations)).toBe(100_000);
    expect(fromBase64url(salt).byteLength).toBe(16);
  });
});

describe("POST /auth/login", () => {
  it("logs in with any email case and returns the register shape", async () => {
    const human = await registerHuman();
    const res = await call("/auth/login", { body: { email: human.input.email.toUpperCase(), password: human.input.password } });
    expect(res.status).toBe(200);
    expect(res.body.user).toEqual(human.user);
    expect(res.body.access_token).toEqual(expect.any(String));
  });

  it("refuses a wrong password and an unknown email alike", async () => {
    const human = await registerHuman();
    expectError(await call("/auth/login", { body: { email: human.input.email, password: "wrong password" } }), 401, "UNAUTHORIZED");
    expectError(await call("/auth/login", { body: { email: "nobody@example.com", password: "whatever1" } }), 401, "UNAUTHORIZED");
  });
});

describe("POST /auth/bot/register, /auth/bot/login and /auth/bot/login-by-name", () => {
  it("registers inside the envelope with a slk_ key and a webhook secret shown once", async () => {
    const name = unique("Bot");
    const res = await call("/auth/bot/register", { body: { name, model: "gpt-x", role: "challenger", language: "en" } });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("success");
    const d = res.body.data;
    expect(d).toEqual({
      bot_id: expect.any(String),
      api_key: expect.any(String),
      name,
      model: "gpt-x",
      role: "challenger",
      language: "en",
      webhook_url: null,
      webhook_secret: expect.any(String),
      owner_id: null,
      created_at: expect.any(String),
    });
    expect(d.api_key).toMatch(/^slk_[A-Za-z0-9_-]{43}$/);
    expect(d.created_at).toMatch(/Z$/);
  });

  it("defaults language to zh and validates name, role and webhook_url", async () => {
    const bot = await registerBot();
    expect(bot.language).toBe("zh");
    const bad: [Record<string, unknown>, string][] = [
      [{ name: "" }, "name"],
      [{ name: "x".repeat(51) }, "name"],
      [{ role: "villain" }, "role"],
      [{ model: undefined }, "model"],
      [{ webhook_url: "ftp://example.com/hook" }, "webhook_url"],
      [{ webhook_url: "http://127.0.0.1:9000/hook" }, "webhook_url"],
      [{ webhook_url: "not a url" }, "webhook_url"],
    ];
    for (const [patch, field] of bad) {
      const res = await call("/auth/bot/register", { body: { name: unique("b"), model: "m", ...patch } });
      expect(expectError(res, 400, "VALIDATION_ERROR").details.fields.map((f: any) => f.field)).toContain(field);
    }
    const ok = await call("/auth/bot/register", { body: { name: unique("b"), model: "m", webhook_url: "https://bots.example.com/hook" } });
    expect(ok.status).toBe(201);
    expect(ok.body.data.webhook_url).toBe("https://bots.example.com/hook");
  });

  it("treats bot names as unique case-insensitively", async () => {
    const bot = await registerBot();
    const res = await call("/auth/bot/register", { body: { name: bot.name.toUpperCase(), model: "m" } });
    expectError(res, 409, "CONFLICT");
  });

  it("exchanges the API key for a JWT with the bot at top level; a wrong key is 401, a missing one 400", async () => {
    const bot = await registerBot();
    const res = await call("/auth/bot/login", { body: { api_key: bot.apiKey } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: expect.any(String),
      access_token: expect.any(String),
      bot: { id: bot.id, name: bot.name, model: "test-model", status: "active" },
    });
    expectError(await call("/auth/bot/login", { body: { api_key: "slk_wrong" } }), 401, "UNAUTHORIZED");
    expectError(await call("/auth/bot/login", { body: {} }), 400, "VALIDATION_ERROR");
  });

  it("logs in by name (any case) with the master key; a wrong master key is 401, an unknown name 404", async () => {
    const bot = await registerBot();
    const ok = await call("/auth/bot/login-by-name", { body: { bot_name: bot.name.toUpperCase(), master_key: "test-master-key" } });
    expect(ok.status).toBe(200);
    expect(ok.body.bot.id).toBe(bot.id);
    expectError(await call("/auth/bot/login-by-name", { body: { bot_name: bot.name, master_key: "nope" } }), 401, "UNAUTHORIZED");
    expectError(await call("/auth/bot/login-by-name", { body: { bot_name: "no-such-bot", master_key: "test-master-key" } }), 404, "NOT_FOUND");
  });

  it("disables login-by-name with 403 FORBIDDEN when MASTER_KEY is unset", async () => {
    const bot = await registerBot();
    const res = await app.request(
      `${BASE}/auth/bot/login-by-name`,
      { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ bot_name: bot.name, master_key: "" + "x" }) },
      { ...env, MASTER_KEY: undefined },
    );
    const body = (await res.json()) as any;
    expect(res.status).toBe(403);
    expect(body.error.code).toBe("FORBIDDEN");
  });
});

describe("GET /auth/me and the four credential kinds", () => {
  it("answers a human JWT with the user and its created_at", async () => {
    const human = await registerHuman();
    const res = await call("/auth/me", { token: human.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...human.user, created_at: expect.stringMatching(/Z$/), unread_count: 0 });
  });

  it("answers a bot JWT, and the bot API key itself as a bearer, with the bot", async () => {
    const bot = await registerBot({ role: "voice" });
    const expected = {
      id: bot.id,
      name: bot.name,
      model: "test-model",
      status: "active",
      role: "voice",
      language: "zh",
      user_type: "bot",
      created_at: bot.created_at,
      unread_count: 0,
    };
    for (const token of [bot.token, bot.apiKey]) {
      const res = await call("/auth/me", { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
    }
  });

  it("accepts a human API token as Bearer and as X-API-Key", async () => {
    const human = await registerHuman();
    const gen = await call("/auth/api-token/generate", { method: "POST", token: human.token });
    expect(gen.status).toBe(200);
    const apiToken = gen.body.token;
    expect((await call("/auth/me", { token: apiToken })).body.id).toBe(human.id);
    expect((await call("/auth/me", { headers: { "X-API-Key": apiToken } })).body.id).toBe(human.id);
  });

  it("refuses tampered, foreign, alg:none and other-algorithm JWTs with AUTH_INVALID_TOKEN", async () => {
    const human = await registerHuman();
    const claims = { sub: human.id, typ: "human", name: "x", iat: now(), exp: now() + 600, jti: "j" };
    const [h, p, s] = human.token.split(".");
    const flipped = s.slice(0, -2) + (s.at(-2) === "A" ? "B" : "A") + s.at(-1);
    const cases: [string, string][] = [
      [`${h}.${p}.${flipped}`, "bad_signature"],
      [`${h}.${b64json({ ...claims, sub: "someone-else" })}.${s}`, "bad_signature"],
      [await forge({ alg: "HS256", typ: "JWT" }, claims, "another-secret"), "bad_signature"],
      [`${b64json({ alg: "none", typ: "JWT" })}.${b64json(claims)}.`, "unsupported_alg"],
      [await forge({ alg: "HS512", typ: "JWT" }, claims), "unsupported_alg"],
      ["not.a.jwt", "malformed"],
      ["garbage", "malformed"],
      [await forge({ alg: "HS256" }, { ...claims, exp: undefined }), "missing_exp"],
      [await forge({ alg: "HS256" }, { ...claims, iat: now() + 3600 }), "future_iat"],
      [await forge({ alg: "HS256" }, { ...claims, typ: "superuser" }), "bad_claims"],
    ];
    for (const [token, reason] of cases) {
      const err = expectError(await call("/auth/me", { token }), 401, "AUTH_INVALID_TOKEN");
      expect(err.details.reason, token).toBe(reason);
    }
  });

  it("issues JWTs whose iat and exp are integer seconds (libraries that refuse a fractional date read them)", async () => {
    const human = await registerHuman();
    const claims = JSON.parse(new TextDecoder().decode(fromBase64url(human.token.split(".")[1])));
    expect(Number.isInteger(claims.iat), String(claims.iat)).toBe(true);
    expect(Number.isInteger(claims.exp)).toBe(true);
    expect(claims.iat).toBeLessThanOrEqual(now());
  });

  it("refuses an expired JWT with AUTH_EXPIRED_TOKEN", async () => {
    const human = await registerHuman();
    const token = await signJwt({ id: human.id, type: "human", name: "x" }, "test-jwt-secret", 60, now() - 3600);
    expectError(await call("/auth/me", { token }), 401, "AUTH_EXPIRED_TOKEN");
  });
});

describe("POST /auth/api-token/generate", () => {
  it("issues a 30-day slt_ token and revokes the previous one", async () => {
    const human = await registerHuman();
    const first = await call("/auth/api-token/generate", { method: "POST", token: human.token });
    expect(first.body).toEqual({
      message: expect.any(String),
      token: expect.stringMatching(/^slt_[A-Za-z0-9_-]{43}$/),
      token_info: { expires_at: expect.stringMatching(/Z$/), remaining_days: 30 },
    });
    const days = (Date.parse(first.body.token_info.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    const second = await call("/auth/api-token/generate", { method: "POST", token: human.token });
    expect(second.body.token).not.toBe(first.body.token);
    expectError(await call("/auth/me", { token: first.body.token }), 401, "UNAUTHORIZED");
    expect((await call("/auth/me", { token: second.body.token })).status).toBe(200);
  });

  it("refuses an expired API token with AUTH_EXPIRED_TOKEN", async () => {
    const human = await registerHuman();
    const token = (await call("/auth/api-token/generate", { method: "POST", token: human.token })).body.token;
    await env.DB.prepare("UPDATE api_tokens SET expires_at = ? WHERE user_id = ?").bind("2020-01-01T00:00:00.000Z", human.id).run();
    expectError(await call("/auth/me", { token }), 401, "AUTH_EXPIRED_TOKEN");
  });
});

describe("admin accounts", () => {
  it("the operator script's SQL creates an admin-<suffix> account that logs in as admin", async () => {
    const email = `${unique("root")}@example.com`;
    const { id, sql } = await adminInsertSql({ username: unique("root"), email, password: "operator password" });
    expect(id).toMatch(/^admin-[0-9a-f]{12}$/);
    await env.DB.exec(sql);
    const login = await call("/auth/login", { body: { email, password: "operator password" } });
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ id, user_type: "admin" });
    const me = await call("/auth/me", { token: login.body.access_token });
    expect(me.body).toMatchObject({ id, user_type: "admin" });
  });
});

describe("secrets never leak from the auth endpoints", () => {
  it("no login or /auth/me response carries the API key, a password, key or token hash, or the webhook secret", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const gen = await call("/auth/api-token/generate", { method: "POST", token: human.token });
    const rows = await env.DB.prepare(
      "SELECT (SELECT password_hash FROM users WHERE id = ?1) AS ph, (SELECT api_key_hash FROM bots WHERE id = ?2) AS kh, (SELECT token_hash FROM api_tokens WHERE user_id = ?1) AS th",
    )
      .bind(human.id, bot.id)
      .first<{ ph: string; kh: string; th: string }>();
    const responses = [
      await call("/auth/bot/login", { body: { api_key: bot.apiKey } }),
      await call("/auth/bot/login-by-name", { body: { bot_name: bot.name, master_key: "test-master-key" } }),
      await call("/auth/me", { token: bot.token }),
      await call("/auth/me", { token: human.token }),
      await call("/auth/me", { token: gen.body.token }),
      await call("/auth/login", { body: { email: human.input.email, password: human.input.password } }),
    ];
    for (const res of responses) {
      for (const secret of [bot.apiKey, bot.webhook_secret, rows!.ph, rows!.kh, rows!.th, "password", "hash"]) {
        expect(res.text).not.toContain(secret);
      }
    }
  });
});
