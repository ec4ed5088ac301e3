import { afterEach, describe, expect, it, vi } from "vitest";
import { call, createBranch, expectError, registerAdmin, registerBot, registerHuman, storyWithSegments, submit } from "./helpers";

const realFetch = globalThis.fetch;
/** A summary provider that exists only here, where fetch to it is mocked. */
const LLM = { env: { LLM_BASE_URL: "https://llm.test/v1", LLM_API_KEY: "test-llm-key", LLM_MODEL: "test-model", LLM_TIMEOUT_MS: "300" } };
type Provider = (init: RequestInit) => Promise<Response>;

/** Mocks only the language-model provider's HTTP endpoint; every other fetch goes through. */
function mockProvider(answer: Provider) {
  const calls: any[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https://llm.test/")) return realFetch(input, init);
    calls.push({ url, init, body: JSON.parse(String(init!.body)) });
    return answer(init!);
  });
  return calls;
}

afterEach(() => vi.restoreAllMocks());

async function forkedBranch() {
  const { owner, story, segments } = await storyWithSegments();
  const fork = await createBranch(owner.token, story.id, { fork_at_segment_id: segments[1].id, initial_segment: "The storm broke at noon." });
  await submit(owner.token, fork.id, "Nobody came to the harbour.");
  return { owner, story, fork };
}

describe("a branch's summary", () => {
  it("GET answers the extractive summary of the path (not stored) until one is made; POST makes one with the provider", async () => {
    const { owner, fork } = await forkedBranch();
    expect((await call(`/branches/${fork.id}/summary`)).body.data).toEqual({
      branch_id: fork.id,
      summary: expect.stringContaining("Nobody came to the harbour."),
      covers_up_to: 4,
      source: "extractive",
      updated_at: null,
    });
    const calls = mockProvider(async () => Response.json({ choices: [{ message: { content: "A storm; an empty harbour." } }] }));
    const res = await call(`/branches/${fork.id}/summary`, { method: "POST", token: owner.token, ...LLM });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      branch_id: fork.id,
      summary: "A storm; an empty harbour.",
      covers_up_to: 4,
      source: "llm",
      updated_at: expect.any(String),
    });
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe("https://llm.test/v1/chat/completions");
    expect(calls[0].init.headers.authorization).toBe("Bearer test-llm-key");
    expect(calls[0].body.model).toBe("test-model");
    expect(calls[0].body.messages.at(-1).content).toContain("Nobody came to the harbour.");
    expect((await call(`/branches/${fork.id}/summary`)).body.data.summary).toBe("A storm; an empty harbour.");
  });

  it("falls back to the extractive summary when the provider fails or times out", async () => {
    const { owner, fork } = await forkedBranch();
    mockProvider(async () => new Response("overloaded", { status: 503 }));
    const failed = (await call(`/branches/${fork.id}/summary`, { method: "POST", token: owner.token, ...LLM })).body.data;
    expect(failed).toMatchObject({ source: "extractive", covers_up_to: 4 });
    expect(failed.summary).toContain("Once upon a time.");
    expect(failed.summary).toContain("Nobody came to the harbour.");
    vi.restoreAllMocks();
    mockProvider((init) => new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason))));
    const timedOut = await call(`/branches/${fork.id}/summary?force_refresh=true`, { token: owner.token, ...LLM });
    expect(timedOut.status).toBe(200);
    expect(timedOut.body.data.source).toBe("extractive");
  });

  it("uses the extractive summary when no provider is configured", async () => {
    const { owner, fork } = await forkedBranch();
    const calls = mockProvider(async () => Response.json({}));
    const res = await call(`/branches/${fork.id}/summary`, { method: "POST", token: owner.token });
    expect(res.body.data).toMatchObject({ source: "extractive", covers_up_to: 4 });
    expect(calls).toHaveLength(0);
  });

  it("an unknown branch is 404 for GET and POST; force_refresh must be a boolean (400)", async () => {
    const { fork } = await forkedBranch();
    expectError(await call(`/branches/${crypto.randomUUID()}/summary`), 404, "NOT_FOUND");
    const { owner } = await forkedBranch();
    expectError(await call(`/branches/${crypto.randomUUID()}/summary`, { method: "POST", token: owner.token }), 404, "NOT_FOUND");
    expectError(await call(`/branches/${fork.id}/summary?force_refresh=perhaps`), 400, "VALIDATION_ERROR");
  });
});

describe("a summary written by hand (PATCH /branches/{id}/summary, InkPath's path)", () => {
  const written = "So far: a storm, and nobody at the harbour.";

  it("the story's owner sets it; GET serves it, in the spec's record and InkPath's names", async () => {
    const { owner, fork } = await forkedBranch();
    const res = await call(`/branches/${fork.id}/summary`, { method: "PATCH", token: owner.token, body: { current_summary: written } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      branch_id: fork.id,
      summary: written,
      covers_up_to: 4,
      source: "manual",
      updated_at: expect.any(String),
      current_summary: written,
      summary_updated_at: res.body.data.updated_at,
      summary_covers_up_to: 4,
    });
    expect((await call(`/branches/${fork.id}/summary`)).body.data).toEqual({
      branch_id: fork.id,
      summary: written,
      covers_up_to: 4,
      source: "manual",
      updated_at: res.body.data.updated_at,
    });
  });

  it("an admin may set it too; anyone else is 403 PERMISSION_DENIED and changes nothing", async () => {
    const { fork } = await forkedBranch();
    const admin = await registerAdmin();
    expect((await call(`/branches/${fork.id}/summary`, { method: "PATCH", token: admin.token, body: { current_summary: written } })).status).toBe(200);
    for (const stranger of [await registerHuman(), await registerBot()]) {
      const res = await call(`/branches/${fork.id}/summary`, { method: "PATCH", token: stranger.token, body: { current_summary: "Mine now." } });
      expectError(res, 403, "PERMISSION_DENIED");
    }
    expect((await call(`/branches/${fork.id}/summary`)).body.data.summary).toBe(written);
  });

  it("a regeneration asked by anyone else leaves it in place (no provider call); the owner's force_refresh or POST replaces it", async () => {
    const { owner, fork } = await forkedBranch();
    await call(`/branches/${fork.id}/summary`, { method: "PATCH", token: owner.token, body: { current_summary: written } });
    const calls = mockProvider(async () => Response.json({ choices: [{ message: { content: "A generated summary." } }] }));
    const reader = await registerHuman();
    for (const res of [
      await call(`/branches/${fork.id}/summary`, { method: "POST", token: reader.token, ...LLM }),
      await call(`/branches/${fork.id}/summary?force_refresh=true`, { token: reader.token, ...LLM }),
    ]) {
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ summary: written, source: "manual" });
    }
    expect(calls).toHaveLength(0);
    const refreshed = await call(`/branches/${fork.id}/summary?force_refresh=true`, { token: owner.token, ...LLM });
    expect(refreshed.body.data).toMatchObject({ summary: "A generated summary.", source: "llm" });
    await call(`/branches/${fork.id}/summary`, { method: "PATCH", token: owner.token, body: { current_summary: written } });
    const posted = await call(`/branches/${fork.id}/summary`, { method: "POST", token: owner.token });
    expect(posted.body.data).toMatchObject({ source: "extractive" });
    // A generated summary is anyone's to regenerate again.
    expect((await call(`/branches/${fork.id}/summary`, { method: "POST", token: reader.token, ...LLM })).body.data).toMatchObject({ source: "llm" });
  });

  it("refuses a missing, empty, non-string, too long or control-character summary (400), and an unknown branch (404)", async () => {
    const { owner, fork } = await forkedBranch();
    for (const body of [
      {},
      { current_summary: "" },
      { current_summary: "   " },
      { current_summary: 42 },
      { current_summary: "x".repeat(10_001) },
      { current_summary: "So far\u001b[2J" },
    ]) {
      const res = await call(`/branches/${fork.id}/summary`, { method: "PATCH", token: owner.token, body });
      expect(
        expectError(res, 400, "VALIDATION_ERROR").details.fields.map((f: any) => f.field),
        JSON.stringify(body),
      ).toEqual(["current_summary"]);
    }
    expectError(
      await call(`/branches/${crypto.randomUUID()}/summary`, { method: "PATCH", token: owner.token, body: { current_summary: written } }),
      404,
      "NOT_FOUND",
    );
    expect((await call(`/branches/${fork.id}/summary`)).body.data).toMatchObject({ source: "extractive", updated_at: null });
  });
});
