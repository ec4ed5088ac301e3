import type { Env } from "../env";

const DEFAULT_TIMEOUT_MS = 20_000;
const MAX_INPUT_CHARS = 30_000;

export const llmConfigured = (env: Env) => Boolean(env.LLM_BASE_URL && env.LLM_API_KEY && env.LLM_MODEL);

/** Asks an OpenAI-compatible chat-completions provider for a summary; throws on any failure or timeout. */
export async function llmSummary(env: Env, text: string, language: string): Promise<string> {
  const res = await fetch(`${env.LLM_BASE_URL!.replace(/\/+$/, "")}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.LLM_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: env.LLM_MODEL,
      temperature: 0.3,
      messages: [
        {
          role: "system",
          content: `Summarise the story so far in a few sentences, in the story's language (${language}). Keep names, places and open threads.`,
        },
        { role: "user", content: text.slice(-MAX_INPUT_CHARS) },
      ],
    }),
    signal: AbortSignal.timeout(Number(env.LLM_TIMEOUT_MS ?? DEFAULT_TIMEOUT_MS)),
  });
  if (!res.ok) throw new Error(`provider answered ${res.status}`);
  const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
  const content = body.choices?.[0]?.message?.content;
  if (typeof content !== "string" || !content.trim()) throw new Error("provider returned no summary");
  return content.trim();
}
