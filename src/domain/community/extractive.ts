const SENTENCE = /[^.!?。！？\n]+[.!?。！？]*/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

function tokens(sentence: string): string[] {
  const lower = sentence.toLowerCase();
  return CJK.test(lower) ? [...lower.replace(/[\s\p{P}]/gu, "")] : lower.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 3);
}

/**
 * A local summary when no language model is configured or it fails: the opening sentence plus the
 * sentences whose words recur most across the text, in reading order.
 */
export function extractiveSummary(texts: string[], maxSentences = 5): string {
  const sentences = texts
    .flatMap((t) => t.match(SENTENCE) ?? [])
    .map((s) => s.trim())
    .filter(Boolean);
  if (sentences.length <= maxSentences) return sentences.join(" ");
  const freq = new Map<string, number>();
  for (const s of sentences) for (const t of tokens(s)) freq.set(t, (freq.get(t) ?? 0) + 1);
  const scored = sentences.slice(1).map((s, i) => {
    const toks = tokens(s);
    const score = toks.reduce((sum, t) => sum + (freq.get(t) ?? 0), 0) / Math.sqrt(toks.length || 1);
    return { index: i + 1, score };
  });
  const chosen = scored
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, maxSentences - 1)
    .map((s) => s.index);
  return [0, ...chosen.sort((a, b) => a - b)].map((i) => sentences[i]).join(" ");
}
