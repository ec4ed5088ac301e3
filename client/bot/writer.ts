/**
 * The reference bot's writers. With LLM_BASE_URL, LLM_API_KEY and LLM_MODEL set, an OpenAI-compatible provider
 * (`POST {LLM_BASE_URL}/chat/completions`, as the service's summaries do); otherwise, or when the provider fails,
 * an offline writer that recombines the story's own words, so the bot runs on a fresh clone with no network.
 * Either way the text is fitted to the story's length rule, counted exactly as the service counts it.
 */
import { contentLength, countsCharacters } from "../src/length";

export interface WriteContext {
  botName: string;
  title: string;
  background: string;
  styleRules: string | null;
  language: string;
  minLength: number;
  maxLength: number;
  /** The latest segments on the branch, oldest first. */
  recent: string[];
}

export interface LlmSettings {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
}

export function llmSettings(env: Record<string, string | undefined>): LlmSettings | null {
  const { LLM_BASE_URL, LLM_API_KEY, LLM_MODEL } = env;
  if (!LLM_BASE_URL || !LLM_API_KEY || !LLM_MODEL) return null;
  return { baseUrl: LLM_BASE_URL.replace(/\/+$/, ""), apiKey: LLM_API_KEY, model: LLM_MODEL, timeoutMs: Number(env.LLM_TIMEOUT_MS ?? 30_000) };
}

const FALLBACK_WORDS =
  "the tide the town a lantern the harbour someone waited quietly under grey light while the boats stayed far out and nobody spoke of it".split(" ");
const FALLBACK_CHARS: Record<string, string[]> = {
  zh: [..."潮水没有回来小镇的灯火在雾里摇晃有人在码头等待"],
  ja: [..."潮が戻らない町の灯りは霧の中で揺れて誰かが港で待っていた"],
  ko: [..."조수가돌아오지않는마을의등불이안개속에흔들리고누군가부두에서기다렸다"],
};

/** A deterministic-enough pseudo-random source (Math.random is fine; a seed makes tests repeatable). */
export type Random = () => number;

/** The length to aim for: a little above the minimum, never above the maximum. */
function target(ctx: WriteContext, random: Random) {
  const spread = Math.min(Math.max(0, ctx.maxLength - ctx.minLength), Math.max(3, Math.ceil(ctx.minLength * 0.2)));
  return ctx.minLength + Math.floor(random() * (spread + 1));
}

/** Builds text from the story's own words (or characters, for zh/ja/ko): no network. */
export function offlineWrite(ctx: WriteContext, random: Random = Math.random, length = target(ctx, random)): string {
  const source = [...ctx.recent.slice(-5), ctx.background].join(" ");
  if (countsCharacters(ctx.language)) {
    // CJK characters only: a zh story whose background is in English should not read as scrambled Latin letters
    const chars = source.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu) ?? [];
    const pool = new Set(chars).size >= 6 ? chars : FALLBACK_CHARS[ctx.language.split("-")[0].toLowerCase()];
    let out = ""; // punctuation counts as a character too, so exactly `length` of them in all
    for (let n = 0; n < length; n++) {
      if (n === length - 1 && length > 1) out += "。";
      else if ((n + 1) % 12 === 0 && n < length - 2) out += "，";
      else out += pool[Math.floor(random() * pool.length)];
    }
    return out;
  }
  const words = source
    .split(/\s+/u)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "").toLowerCase())
    .filter((w) => w && !/\d/.test(w));
  const pool = new Set(words).size >= 8 ? words : FALLBACK_WORDS;
  const tokens: string[] = [];
  let sentence = 0;
  for (let n = 0; n < length; n++) {
    let w = pool[Math.floor(random() * pool.length)];
    if (sentence === 0) w = w.charAt(0).toUpperCase() + w.slice(1);
    sentence++;
    if (n === length - 1 || (sentence >= 6 && random() < 0.25)) {
      w += ".";
      sentence = 0;
    }
    tokens.push(w);
  }
  return tokens.join(" ");
}

/** Cuts text to the maximum (in the story's unit) and pads it to the minimum with offline text. */
export function fitLength(text: string, ctx: WriteContext, random: Random = Math.random): string {
  let out = text.trim();
  if (contentLength(out, ctx.language) > ctx.maxLength) {
    if (countsCharacters(ctx.language)) {
      let kept = 0;
      let cut = "";
      for (const ch of out) {
        if (!/\s/u.test(ch)) {
          if (kept === ctx.maxLength) break;
          kept++;
        }
        cut += ch;
      }
      out = cut;
    } else {
      out = out.split(/\s+/u).filter(Boolean).slice(0, ctx.maxLength).join(" ");
    }
  }
  const short = ctx.minLength - contentLength(out, ctx.language);
  if (short > 0) out = `${out}${countsCharacters(ctx.language) ? "" : " "}${offlineWrite(ctx, random, short)}`.trim();
  return out;
}

/** Asks the provider for the next segment; throws on any failure or timeout. */
export async function llmWrite(ctx: WriteContext, llm: LlmSettings, fetchImpl: typeof fetch = fetch): Promise<string> {
  const unit = countsCharacters(ctx.language) ? "characters (not counting spaces)" : "words";
  const res = await fetchImpl(`${llm.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${llm.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: llm.model,
      temperature: 0.8,
      messages: [
        {
          role: "system",
          content:
            `You are ${ctx.botName}, one of several writers taking turns on the story "${ctx.title}". Write only the next segment, ` +
            `in the story's language (${ctx.language}), between ${ctx.minLength} and ${ctx.maxLength} ${unit}. No title, no notes.` +
            (ctx.styleRules ? ` Style rules: ${ctx.styleRules}` : ""),
        },
        { role: "user", content: `Background: ${ctx.background}\n\nThe story so far (latest last):\n\n${ctx.recent.slice(-5).join("\n\n")}` },
      ],
    }),
    signal: AbortSignal.timeout(llm.timeoutMs),
  });
  if (!res.ok) throw new Error(`provider answered ${res.status}`);
  const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
  const content = body.choices?.[0]?.message?.content;
  if (typeof content !== "string" || !content.trim()) throw new Error("provider returned no text");
  return content.trim();
}
