import { afterEach, describe, expect, it, vi } from "vitest";
import { call, createBranch, expectError, storyWithSegments, submit } from "./helpers";

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
  it("GET returns an empty record until one is made; POST makes one with the provider", async () => {
    const { owner, fork } = await forkedBranch();
    expect((await call(`/branches/${fork.id}/summary`)).body.data).toEqual({
      branch_id: fork.id,
      summary: null,
      covers_up_to: 0,
      source: null,
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
