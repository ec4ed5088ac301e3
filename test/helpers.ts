import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { app } from "../src/app";
import type { Env } from "../src/env";
import { base64url, randomBytes } from "../src/lib/crypto";
import { nameKey } from "../src/lib/names";
import { getDb } from "../src/db/client";
import { searchShardsOf } from "../src/durable/search-shards";
import { syncStory } from "../src/usecases/search";

export const BASE = "https://storyloom.test/api/v1";

export interface CallOptions {
  method?: string;
  body?: unknown;
  rawBody?: BodyInit;
  token?: string;
  headers?: Record<string, string>;
  /** Bindings to change for this one request (served by the app itself, with the rest of the real env). */
  env?: Partial<Env>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

let scopedBindings: Partial<Env> | undefined;

/**
 * Serves every call() made while `fn` runs with these bindings changed, as if each call passed
 * `env: bindings` (a call's own `env` wins). Tests in a file run one at a time, so the scope is the test's own; a scope
 * inside another gives the outer one back when it ends.
 */
export async function withBindings<T>(bindings: Partial<Env>, fn: () => Promise<T>): Promise<T> {
  const outer = scopedBindings;
  scopedBindings = bindings;
  try {
    return await fn();
  } finally {
    scopedBindings = outer;
  }
}

/** A client address at random: a fresh one per request keeps the anonymous read limit out of unrelated tests. */
export const address = () => `198.51.100.${Math.floor(Math.random() * 250)}`;

/** Calls the Worker's own fetch handler, as a client over HTTP would: an API path, or a whole URL (a page, a feed). */
export async function call<T = any>(path: string, options: CallOptions = {}): Promise<CallResult<T>> {
  const url = path.startsWith("https://") ? path : `${BASE}${path}`;
  const headers: Record<string, string> = { "CF-Connecting-IP": address(), ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  const init = { method: options.method ?? (body === undefined ? "GET" : "POST"), headers, body };
  let res: Response;
  const bindings = scopedBindings || options.env ? { ...scopedBindings, ...options.env } : undefined;
  if (bindings) {
    const ctx = createExecutionContext();
    res = await app.request(url, init, { ...env, ...bindings }, ctx);
    await waitOnExecutionContext(ctx);
  } else {
    res = await exports.default.fetch(url, init);
  }
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Asserts the error envelope: status, code, and a message. */
export function expectError(res: CallResult, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body.status).toBe("error");
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe("string");
  expect(res.body.error.message.length).toBeGreaterThan(0);
  return res.body.error as { code: string; message: string; details?: any };
}

export const unique = (prefix = "u") => `${prefix}${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;

/**
 * A password's stored hash at one PBKDF2 iteration. The hash carries its iteration count and a login reads it from
 * there (src/lib/password.ts), so an account made with it logs in through the real route for almost nothing, where a
 * registration pays the production 100,000 (about a tenth of a second of CPU each, hundreds of times in the suite).
 */
async function cheapHash(password: string) {
  const salt = randomBytes(16);
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations: 1 }, key, 256);
  return `pbkdf2-sha256$1$${base64url(salt)}$${base64url(new Uint8Array(bits))}`;
}

/**
 * An account's row as registration (or the operator's admin script) writes it, with a cheap hash, then logged in
 * through `POST /auth/login`: the token is a real login's. For every test not about registration or passwords.
 */
async function accountFixture(userType: "human" | "admin", input: { username: string; email: string; password: string }) {
  const id = userType === "admin" ? `admin-${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}` : crypto.randomUUID();
  await env.DB.prepare("INSERT INTO users (id, username, username_key, email, password_hash, user_type, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .bind(id, input.username, nameKey(input.username), input.email, await cheapHash(input.password), userType, new Date().toISOString())
    .run();
  const res = await call("/auth/login", { body: { email: input.email, password: input.password } });
  expect(res.status, res.text).toBe(200);
  return { ...res.body, token: res.body.access_token as string, id: res.body.user.id as string };
}

/** A fresh human, signed in (a fixture: see `accountFixture`; `registerHumanByApi` registers through the API). */
export async function registerHuman(overrides: { username?: string; email?: string; password?: string } = {}) {
  const username = overrides.username ?? unique("human");
  const input = { username, email: `${username}@example.com`, password: "correct horse battery", user_type: "human", ...overrides };
  return { ...(await accountFixture("human", input)), input };
}

/** A fresh human registered through `POST /auth/register`, as a client does (the real 100,000 PBKDF2 iterations). */
export async function registerHumanByApi(overrides: Record<string, unknown> = {}) {
  const username = unique("human");
  const input = { username, email: `${username}@example.com`, password: "correct horse battery", user_type: "human", ...overrides };
  const res = await call("/auth/register", { body: input });
  expect(res.status, res.text).toBe(201);
  return { ...res.body, input, token: res.body.access_token as string, id: res.body.user.id as string };
}

export async function registerBot(overrides: Record<string, unknown> = {}) {
  const input = { name: unique("bot"), model: "test-model", ...overrides };
  const res = await call("/auth/bot/register", { body: input });
  expect(res.status, res.text).toBe(201);
  const data = res.body.data;
  const login = await call("/auth/bot/login", { body: { api_key: data.api_key } });
  expect(login.status, login.text).toBe(200);
  return { ...data, input, id: data.bot_id as string, apiKey: data.api_key as string, token: login.body.access_token as string };
}

/** A fresh admin account, as the operator script makes it (test/auth.test.ts runs the script itself), logged in. */
export async function registerAdmin() {
  const input = { username: unique("admin"), email: `${unique("admin")}@example.com`, password: "admin password" };
  const { id, token } = await accountFixture("admin", input);
  return { id, email: input.email, token };
}

/** A human's API token (slt_…); generating one revokes that human's previous one. */
export async function apiTokenOf(human: { token: string }) {
  const res = await call("/auth/api-token/generate", { method: "POST", token: human.token });
  expect(res.status, res.text).toBe(200);
  return res.body.token as string;
}

/** `n` white-space-separated words. */
/**
 * A client address no other test holds a read lease for (a /64 of its own: src/lib/address.ts). Leases live in the
 * isolate's memory, and test files share isolates (vitest.config.ts), so a test that counts leases needs its own.
 */
export function uniqueAddress() {
  const part = () => Math.floor(Math.random() * 0x10000).toString(16);
  return `2001:db8:${part()}:${part()}::1`;
}

export const words = (n: number, word = "word") => Array.from({ length: n }, (_, i) => `${word}${i}`).join(" ");
/** `n` Chinese characters (no white space). */
export const hanzi = (n: number) => "故事".repeat(Math.ceil(n / 2)).slice(0, n);

export const storyInput = (overrides: Record<string, unknown> = {}) => ({
  title: unique("Story "),
  background: "A harbour town where the tide never comes back.",
  starter: "Once upon a time.",
  initial_segments: [words(5, "a"), words(5, "b"), words(5, "c")],
  language: "en",
  min_length: 3,
  max_length: 50,
  ...overrides,
});

export async function createStory(token: string, overrides: Record<string, unknown> = {}) {
  const res = await call("/stories", { token, body: storyInput(overrides) });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; main_branch_id: string; [k: string]: any };
}

export async function createBranch(token: string, storyId: string, body: Record<string, unknown> = {}) {
  const res = await call(`/stories/${storyId}/branches`, { token, body: { title: unique("Branch "), ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; [k: string]: any };
}

export const submit = (token: string, branchId: string, content: string) => call(`/branches/${branchId}/segments`, { token, body: { content } });

export const join = (token: string, branchId: string, role?: string) => call(`/branches/${branchId}/join`, { token, body: role ? { role } : {} });

export const leave = (token: string, branchId: string) => call(`/branches/${branchId}/leave`, { token, method: "POST" });

/** The Durable Object that holds a branch's turn queue. */
export const branchRoom = (branchId: string) => env.BRANCH_ROOM.get(env.BRANCH_ROOM.idFromName(branchId));

export const vote = (token: string, target_type: string, target_id: string, v: number) => call("/votes", { token, body: { target_type, target_id, vote: v } });

/** A story with its main-line segments, owned by a fresh human. */
export async function storyWithSegments(overrides: Record<string, unknown> = {}) {
  const owner = await registerHuman();
  const story = await createStory(owner.token, overrides);
  const segments = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments as any[];
  return { owner, story, segments };
}

/** Every table the service's data grows in (the fuzzer counts their rows; the index check refuses scans of them). */
export const DATA_TABLES = [
  "users",
  "bots",
  "api_tokens",
  "stories",
  "tags",
  "story_tags",
  "preferences",
  "branches",
  "segments",
  "logs",
  "log_authors",
  "branch_members",
  "votes",
  "comments",
  "rewrites",
  "pins",
  "branch_summaries",
  "webhook_deliveries",
  "webhook_attempts",
  "idempotency_keys",
  "outbox",
  "reports",
  "audit_log",
  "oauth_grants",
  "oauth_kv",
  "bookmarks",
  "reading_progress",
  "search_stories",
  "search_segments",
  "follows",
  "follow_counts",
  "inbox_events",
  "inbox_items",
  "feed_tokens",
];

/** The real read-limit binding, with the key of every call it gets recorded in `calls` (to count leases bought). */
export function countingReadLimiter() {
  const calls: string[] = [];
  const counting = {
    limit: (o: { key: string }) => {
      calls.push(o.key);
      return env.READ_LIMITER!.limit(o);
    },
  } as RateLimit;
  return { calls, counting };
}

/**
 * Every story caught up in its search shard, as the search queue's consumer would (src/queue/search.ts): the writes
 * hand their story over after their answer and a second later, and the test reads its writes at once. With this
 * test's bindings (`withBindings`: a shard size of its own).
 */
export async function searchable() {
  const bound = { ...env, ...scopedBindings } as Env;
  const { results } = await bound.DB.prepare(
    // A legacy story is searched in D1 until the move passes it (src/domain/discovery/search-move.ts); once moved, in its shard.
    `SELECT stories.id FROM stories, search_move m WHERE m.id = 1 AND search_version > search_synced
      AND (stories.rowid > m.legacy_max OR stories.rowid < m.watermark)`,
  ).all<{ id: string }>();
  const db = getDb(bound.DB);
  for (const { id } of results) await syncStory(db, searchShardsOf(bound), id);
}
