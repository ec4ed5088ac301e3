import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createBranch, createStory, expectError, registerBot, registerHuman, storyInput, words } from "./helpers";

const withKey = (key: string, token: string, path: string, body: unknown, extra: Record<string, unknown> = {}) =>
  call(path, { token, body, headers: { "Idempotency-Key": key }, ...extra });

const count = async (table: string) => (await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())!.n;

interface Case {
  name: string;
  table: string;
  setup: () => Promise<{ token: string; path: string; body: unknown; other: unknown }>;
}

const cases: Case[] = [
  {
    name: "stories",
    table: "stories",
    setup: async () => ({ token: (await registerHuman()).token, path: "/stories", body: storyInput({ title: "Once" }), other: storyInput({ title: "Twice" }) }),
  },
  {
    name: "branches",
    table: "branches",
    setup: async () => {
      const h = await registerHuman();
      const s = await createStory(h.token);
      return { token: h.token, path: `/stories/${s.id}/branches`, body: { title: "fork" }, other: { title: "other fork" } };
    },
  },
  {
    name: "segments",
    table: "segments",
    setup: async () => {
      const h = await registerHuman();
      const s = await createStory(h.token);
      return { token: h.token, path: `/branches/${s.main_branch_id}/segments`, body: { content: words(4) }, other: { content: words(5) } };
    },
  },
  {
    name: "votes",
    table: "votes",
    setup: async () => {
      const s = await createStory((await registerHuman()).token);
      return {
        token: (await registerHuman()).token,
        path: "/votes",
        body: { target_type: "branch", target_id: s.main_branch_id, vote: 1 },
        other: { target_type: "branch", target_id: s.main_branch_id, vote: -1 },
      };
    },
  },
  {
    name: "comments",
    table: "comments",
    setup: async () => {
      const h = await registerHuman();
      const s = await createStory(h.token);
      return { token: h.token, path: `/branches/${s.main_branch_id}/comments`, body: { content: "hello" }, other: { content: "bye" } };
    },
  },
  {
    name: "rewrites",
    table: "rewrites",
    setup: async () => {
      const h = await registerHuman();
      const s = await createStory(h.token);
      const seg = (await call(`/branches/${s.main_branch_id}/segments`)).body.data.segments[1];
      return { token: h.token, path: `/segments/${seg.id}/rewrites`, body: { content: words(4) }, other: { content: words(6) } };
    },
  },
  {
    name: "pins",
    table: "pins",
    setup: async () => {
      const h = await registerHuman();
      const s = await createStory(h.token);
      return { token: h.token, path: `/stories/${s.id}/pins`, body: { title: "t", content: "c" }, other: { title: "t2", content: "c" } };
    },
  },
  {
    name: "reports",
    table: "reports",
    setup: async () => {
      const s = await createStory((await registerHuman()).token);
      return {
        token: (await registerHuman()).token,
        path: "/reports",
        body: { target_type: "story", target_id: s.id, reason: "spam" },
        other: { target_type: "story", target_id: s.id, reason: "abuse" },
      };
    },
  },
  {
    name: "joins",
    table: "branch_members",
    setup: async () => {
      const s = await createStory((await registerHuman()).token);
      const b = await createBranch((await registerHuman()).token, s.id);
      return { token: (await registerBot()).token, path: `/branches/${b.id}/join`, body: {}, other: { role: "voice" } };
    },
  },
];

describe("Idempotency-Key on every creating POST", () => {
  for (const c of cases) {
    it(`${c.name}: a repeat replays the first response without writing; another body is 422`, async () => {
      const { token, path, body, other } = await c.setup();
      const key = crypto.randomUUID();
      const first = await withKey(key, token, path, body);
      expect(first.status, first.text).toBe(201);
      const rows = await count(c.table);
      const again = await withKey(key, token, path, body);
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await count(c.table)).toBe(rows);
      expectError(await withKey(key, token, path, other), 422, "IDEMPOTENCY_KEY_REUSED");
      expect(await count(c.table)).toBe(rows);
    });

    // The header is checked by the limits middleware alone (the route only describes it): every route refuses it.
    it(`${c.name}: a malformed key is 400 and writes nothing`, async () => {
      const { token, path, body } = await c.setup();
      const rows = await count(c.table);
      for (const key of ["has space", "x".repeat(256), "a\tb"]) {
        const res = await withKey(key, token, path, body);
        expectError(res, 400, "VALIDATION_ERROR");
        expect(res.body.error.details.fields[0].field).toBe("Idempotency-Key");
      }
      expect(await count(c.table)).toBe(rows);
    });
  }

  it("10 parallel identical requests write once and all get the same response", async () => {
    const h = await registerHuman();
    const s = await createStory(h.token);
    const key = crypto.randomUUID();
    const results = await Promise.all(Array.from({ length: 10 }, () => withKey(key, h.token, `/branches/${s.main_branch_id}/segments`, { content: words(4) })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM segments WHERE branch_id = ?").bind(s.main_branch_id).first<{ n: number }>())!;
    expect(n).toBe(5);
  });

  it("a replay counts against no limit, and the key belongs to its caller", async () => {
    const h = await registerHuman();
    const key = crypto.randomUUID();
    const limits = { env: { LIMIT_STORIES_PER_HOUR: "1" } };
    const body = storyInput();
    expect((await withKey(key, h.token, "/stories", body, limits)).status).toBe(201);
    expect((await withKey(key, h.token, "/stories", body, limits)).status).toBe(201);
    expectError(await call("/stories", { token: h.token, body: storyInput(), ...limits }), 429, "RATE_LIMIT_EXCEEDED");
    const other = await registerHuman();
    const theirs = await withKey(key, other.token, "/stories", body);
    expect(theirs.status).toBe(201);
  });

  it("only successes are stored: a failed request with a key runs again", async () => {
    const h = await registerHuman();
    const s = await createStory(h.token);
    const key = crypto.randomUUID();
    const path = `/branches/${s.main_branch_id}/segments`;
    expectError(await withKey(key, h.token, path, { content: "too short" }), 422, "SEGMENT_TOO_SHORT");
    expectError(await withKey(key, h.token, path, { content: "too short" }), 422, "SEGMENT_TOO_SHORT");
    const ok = await withKey(crypto.randomUUID(), h.token, path, { content: words(4) });
    expect(ok.status).toBe(201);
    expectError(await withKey("has space", h.token, path, { content: words(4) }), 400, "VALIDATION_ERROR");
  });
});
