import { describe, expect, it } from "vitest";
import { checkLength } from "../../src/domain/shared/length";
import { type WriteContext, fitLength, llmSettings, llmWrite, offlineWrite } from "../bot/writer";

const ctx = (over: Partial<WriteContext> = {}): WriteContext => ({
  botName: "b",
  title: "T",
  background: "A harbour town where the tide never comes back, and the lanterns stay lit.",
  styleRules: null,
  language: "en",
  minLength: 150,
  maxLength: 500,
  recent: ["The keeper climbed the stairs again, counting every step aloud."],
  ...over,
});

describe("the reference bot's writers meet the story's length rule (as the service checks it)", () => {
  const cases: Partial<WriteContext>[] = [
    { language: "en", minLength: 150, maxLength: 500 },
    { language: "en", minLength: 8, maxLength: 8 },
    { language: "fr", minLength: 1, maxLength: 3 },
    { language: "zh", minLength: 150, maxLength: 500, recent: ["潮水退去以后，小镇再也没有等到它回来。"] },
    { language: "ja", minLength: 12, maxLength: 12 },
    { language: "ko", minLength: 30, maxLength: 40, background: "바다 마을 이야기" },
    { language: "en", minLength: 20, maxLength: 25, recent: [], background: "Short." },
  ];
  it("offline", () => {
    for (const c of cases)
      for (let i = 0; i < 20; i++) {
        const text = offlineWrite(ctx(c));
        expect(() => checkLength(text, { language: c.language!, minLength: c.minLength!, maxLength: c.maxLength! }), `${c.language}: ${text}`).not.toThrow();
      }
  });
  it("fitLength cuts long provider text and pads short text", () => {
    for (const c of cases) {
      const rules = { language: c.language!, minLength: c.minLength!, maxLength: c.maxLength! };
      const long = fitLength("word ".repeat(800) + "故事".repeat(600), ctx(c));
      expect(() => checkLength(long, rules)).not.toThrow();
      const short = fitLength("Hi.", ctx(c));
      expect(() => checkLength(short, rules)).not.toThrow();
    }
  });
});

describe("the provider writer", () => {
  it("is used only with all three LLM_ variables", () => {
    expect(llmSettings({ LLM_BASE_URL: "https://llm.test/v1", LLM_API_KEY: "k" })).toBe(null);
    expect(llmSettings({ LLM_BASE_URL: "https://llm.test/v1/", LLM_API_KEY: "k", LLM_MODEL: "m" })).toMatchObject({
      baseUrl: "https://llm.test/v1",
      model: "m",
    });
  });
  it("POSTs {base}/chat/completions and returns the message (a stub stands in for the provider)", async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const stub = (async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return Response.json({ choices: [{ message: { content: "  The lanterns went out one by one.  " } }] });
    }) as unknown as typeof fetch;
    const text = await llmWrite(ctx({ minLength: 3, maxLength: 20 }), { baseUrl: "https://llm.test/v1", apiKey: "k", model: "m", timeoutMs: 1000 }, stub);
    expect(text).toBe("The lanterns went out one by one.");
    expect(seen[0].url).toBe("https://llm.test/v1/chat/completions");
    expect(new Headers(seen[0].init.headers).get("authorization")).toBe("Bearer k");
    const body = JSON.parse(String(seen[0].init.body));
    expect(body.model).toBe("m");
    expect(body.messages[0].content).toMatch(/between 3 and 20 words/);
    const failing = (async () => new Response("no", { status: 500 })) as unknown as typeof fetch;
    await expect(llmWrite(ctx(), { baseUrl: "https://llm.test/v1", apiKey: "k", model: "m", timeoutMs: 1000 }, failing)).rejects.toThrow(/500/);
  });
});

it("the offline writer keeps to the story's script for zh/ja/ko, even with an English background", () => {
  for (const language of ["zh", "ja", "ko"]) {
    const text = offlineWrite(ctx({ language, minLength: 20, maxLength: 30, recent: ["Start."] }));
    expect(text, language).not.toMatch(/[A-Za-z]/);
  }
  expect(offlineWrite(ctx({ language: "zh", minLength: 13, maxLength: 13 }))).not.toMatch(/，。$/);
});
