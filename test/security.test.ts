import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { type CallResult, DATA_TABLES, call, createBranch, createStory, registerBot, registerHuman, storyInput, storyWithSegments, words } from "./helpers";

/** Everything the fuzzer needs: real ids of each kind, and a human and a bot to call as. */
let world: { ids: Record<string, string>; human: any; bot: any; routes: { method: string; path: string; body?: any }[] };

const counts = async () =>
  Object.fromEntries(await Promise.all(DATA_TABLES.map(async (t) => [t, (await env.DB.prepare(`SELECT count(*) AS n FROM ${t}`).first<{ n: number }>())!.n])));

beforeAll(async () => {
  const { owner, story, segments } = await storyWithSegments();
  const bot = await registerBot();
  const branch = await createBranch(owner.token, story.id);
  const comment = (await call(`/branches/${story.main_branch_id}/comments`, { token: owner.token, body: { content: "hi" } })).body.data;
  const pin = (await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "t", content: "c" } })).body.data;
  const doc = (await call("/openapi.json")).body;
  const routes = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
    Object.entries(ops).map(([method, op]: [string, any]) => ({
      method: method.toUpperCase(),
      path,
      body: op.requestBody?.content?.["application/json"]?.schema,
    })),
  );
  world = {
    ids: { story_id: story.id, branch_id: branch.id, segment_id: segments[1].id, bot_id: bot.id, comment_id: comment.id, pin_id: pin.id },
    human: owner,
    bot,
    routes,
  };
});

async function storedSecrets() {
  const { results } = await env.DB.prepare(
    `SELECT password_hash AS s FROM users UNION ALL SELECT api_key_hash FROM bots UNION ALL SELECT webhook_secret FROM bots
     UNION ALL SELECT token_hash FROM api_tokens`,
  ).all<{ s: string }>();
  return results.map((r) => r.s);
}

const fill = (path: string, ids: Record<string, string>) => path.replace(/\{(\w+)\}/g, (_, name) => ids[name] ?? "x");
const junkIds = (path: string) => path.replace(/\{(\w+)\}/g, (_, name) => (name === "story_id" ? "' OR 1=1 --" : "not-a-uuid"));

function wrongType(schema: any): unknown {
  switch (schema?.type) {
    case "string":
      return 12345;
    case "integer":
    case "number":
      return "12";
    case "boolean":
      return "yes";
    case "array":
      return { not: "an array" };
    default:
      return ["unexpected"];
  }
}

/** Bodies that must all be refused: wrong types, missing fields, huge strings, deep nesting, non-JSON. */
function badBodies(schema: any): { raw: BodyInit; type: string }[] {
  const props: Record<string, any> = schema?.properties ?? {};
  const json = (v: unknown) => ({ raw: JSON.stringify(v), type: "application/json" });
  const deep = "[".repeat(50_000) + "]".repeat(50_000);
  const bodies = [
    json(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, wrongType(s)]))),
    json(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, s?.type === "string" ? "x".repeat(200_000) : wrongType(s)]))),
    json(Object.fromEntries(Object.keys(props).map((k) => [k, JSON.parse(deep.slice(0, 20_000) + deep.slice(-20_000))]))),
    { raw: `{"a":${deep}}`, type: "application/json" },
    { raw: new Uint8Array([0x7b, 0x22, 0x61, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]), type: "application/json" },
    { raw: "{not json", type: "application/json" },
    { raw: "", type: "application/json" },
    json(null),
    json([1, 2, 3]),
    json("a string"),
    { raw: "title=x&content=y", type: "application/x-www-form-urlencoded" },
    { raw: JSON.stringify({ content: "looks like json" }), type: "text/plain" },
  ];
  if (Object.keys(props).length) bodies.push(json({}));
  return bodies;
}

async function expectSane(res: CallResult, label: string, texts?: string[]) {
  texts?.push(res.text);
  expect(res.status, `${label} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status >= 400) {
    expect(res.body?.status, label).toBe("error");
    expect(typeof res.body?.error?.code, label).toBe("string");
  }
}

describe("hardening: no input makes the service fail", () => {
  it("every endpoint refuses bad bodies, junk ids and odd queries with a 4xx and writes nothing", async () => {
    const before = await counts();
    const texts: string[] = [];
    let sent = 0;
    for (const route of world.routes) {
      for (const as of [world.human, world.bot]) {
        for (const path of [fill(route.path, world.ids), junkIds(route.path)]) {
          const label = `${route.method} ${path} as ${as === world.bot ? "bot" : "human"}`;
          if (route.method === "GET") {
            const query = "?limit=abc&offset=-5&page=0&unknown=1&days=99999999999&sort=%00&status[]=x";
            await expectSane(await call(path + query, { token: as.token }), `${label} (query)`, texts);
            await expectSane(await call(`${path}?unknown=1&limit=2`, { token: as.token }), `${label} (unknown parameter)`, texts);
            sent += 2;
          }
          if (!route.body) continue;
          for (const b of badBodies(route.body)) {
            const res = await call(path, { method: route.method, token: as.token, rawBody: b.raw, headers: { "Content-Type": b.type } });
            await expectSane(res, `${label} body ${String(b.raw).slice(0, 40)}`, texts);
            // A body with no required field may legitimately pass as `{}` with extra members ignored.
            const mustRefuse = (route.body.required ?? []).length > 0;
            if (mustRefuse && res.status < 300) throw new Error(`${label} accepted a bad body: ${res.text.slice(0, 200)}`);
            sent++;
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(300);
    const after = await counts();
    // Joins are the one creating POST whose body has no required field: a bot may have joined. Nothing else grew.
    expect({ ...after, branch_members: 0 }).toEqual({ ...before, branch_members: 0 });
    expect(after.branch_members - before.branch_members).toBeLessThanOrEqual(1);
    const secrets = await storedSecrets();
    for (const text of texts) for (const secret of secrets) expect(text.includes(secret)).toBe(false);
    // Thousands of requests, one after another: it grows with every route, and a busy machine doubles it.
  }, 120_000);

  it("extra body fields are ignored, never fatal: a segment's sequence_order and bot_id cannot be forced", async () => {
    const { owner, story } = await storyWithSegments();
    const res = await call("/stories", { token: owner.token, body: { ...storyInput(), extra: { deep: [1, 2] }, __proto__: { admin: true } } });
    expect(res.status).toBe(201);
    const seg = await call(`/branches/${story.main_branch_id}/segments`, { token: owner.token, body: { content: words(4), sequence_order: 999, bot_id: "x" } });
    expect(seg.status).toBe(201);
    expect(seg.body.data.sequence_order).toBe(5);
    expect(seg.body.data.bot_id).toBe(owner.id);
  });

  it("SQL, HTML, emoji, right-to-left and control characters round-trip exactly through stories, segments and comments (titles, backgrounds and style rules refuse control characters)", async () => {
    const human = await registerHuman();
    const nasty = [
      "'; DROP TABLE stories; --",
      "<script>alert('x')</script> &amp; <b>bold</b>",
      "🐉👩‍🚀 emoji ZWJ",
      "مرحبا بالعالم שלום",
      "ctrl \u0001\u0007\u001b\u001f\u007f end",
      "\\u0000 is not a NUL, nor is %00",
    ];
    for (const text of nasty) {
      // Control characters other than tab and newline are refused there (stories.test.ts); the rest keep them.
      const plain = /\p{Cc}/u.test(text) ? "ctrl end" : text;
      const story = await createStory(human.token, {
        title: plain.slice(0, 100),
        background: `${plain} background`,
        style_rules: plain,
        starter: text,
        initial_segments: [`${text} one two`, `${text} three four`, `${text} five six`],
        language: "en",
        min_length: 1,
      });
      const got = (await call(`/stories/${story.id}`)).body.data;
      expect(got).toMatchObject({ title: plain.slice(0, 100), background: `${plain} background`, style_rules: plain, starter: text });
      const segs = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments;
      expect(segs.map((s: any) => s.content)).toEqual([text, `${text} one two`, `${text} three four`, `${text} five six`]);
      const c = await call(`/branches/${story.main_branch_id}/comments`, { token: human.token, body: { content: text } });
      expect(c.body.data.content).toBe(text);
      const list = (await call(`/branches/${story.main_branch_id}/comments`)).body.data.comments;
      expect(list[0].content).toBe(text);
    }
  });
});

describe("secrets never leave", () => {
  it("no response of any endpoint carries a password hash, key or token hash, or webhook secret", async () => {
    const human = await registerHuman();
    const bot = await registerBot({ webhook_url: "https://hooks.example.com/a" });
    await call("/auth/api-token/generate", { method: "POST", token: human.token });
    const story = await createStory(human.token);
    await call(`/branches/${story.main_branch_id}/join`, { token: bot.token, body: {} });
    await call(`/branches/${story.main_branch_id}/segments`, { token: bot.token, body: { content: words(4) } });
    const secrets = [...(await storedSecrets()), bot.apiKey];
    expect(secrets.length).toBeGreaterThan(5);
    const responses: CallResult[] = [];
    const ids = { ...world.ids, story_id: story.id, branch_id: story.main_branch_id, bot_id: bot.id };
    for (const route of world.routes) {
      if (route.method !== "GET") continue;
      for (const token of [undefined, human.token, bot.token]) {
        responses.push(await call(fill(route.path, route.path.startsWith("/bots/{bot_id}/webhook") ? ids : ids), { token }));
      }
    }
    const seg = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments[1].id;
    const creates: [string, unknown, string?][] = [
      ["/stories", storyInput()],
      [`/stories/${story.id}/branches`, { title: "b", initial_segment: words(4) }],
      [`/branches/${story.main_branch_id}/segments`, { content: words(4) }],
      ["/votes", { target_type: "segment", target_id: seg, vote: 1 }, bot.token],
      [`/branches/${story.main_branch_id}/comments`, { content: "c" }],
      [`/segments/${seg}/rewrites`, { content: words(4) }, bot.token],
      [`/stories/${story.id}/pins`, { title: "t", content: "c" }],
      [`/branches/${story.main_branch_id}/summary`, undefined],
    ];
    for (const [path, body, token] of creates) {
      const res = await call(path, { method: "POST", body, token: token ?? human.token });
      expect(res.status, `${path} ${res.text}`).toBeLessThan(300);
      responses.push(res);
    }
    responses.push(await call(`/stories/${story.id}/branches`, { method: "POST", token: bot.token, body: { title: "by bot" } }));
    responses.push(await call("/auth/bot/login", { body: { api_key: bot.apiKey } }));
    responses.push(await call("/auth/login", { body: { email: human.input.email, password: human.input.password } }));
    responses.push(await call("/logs?days=30", { token: human.token }));
    expect(responses.filter((r) => r.status === 200).length).toBeGreaterThan(30);
    for (const res of responses) for (const secret of secrets) expect(res.text.includes(secret), `${secret.slice(0, 12)}… leaked`).toBe(false);
  });
});
