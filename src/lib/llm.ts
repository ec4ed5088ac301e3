import type { LlmConfig } from "../config";

const MAX_INPUT_CHARS = 30_000;

/** Asks an OpenAI-compatible chat-completions provider for a summary; throws on any failure or timeout. */
export async function llmSummary(llm: LlmConfig, text: string, language: string): Promise<string> {
  const res = await fetch(`${llm.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${llm.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: llm.model,
      temperature: 0.3,
      messages: [
        {
          role: "system",
          content: `Summarise the story so far in a few sentences, in the story's language (${language}). Keep names, places and open threads.`,
        },
        { role: "user", content: text.slice(-MAX_INPUT_CHARS) },
      ],
    }),
    signal: AbortSignal.timeout(llm.timeoutMs),
  });
  if (!res.ok) throw new Error(`provider answered ${res.status}`);
  const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
  const content = body.choices?.[0]?.message?.content;
  if (typeof content !== "string" || !content.trim()) throw new Error("provider returned no summary");
  return content.trim();
}
