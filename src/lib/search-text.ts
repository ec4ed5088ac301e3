/**
 * Full-text search's text (issue 58): what the FTS5 index is fed, how a query becomes a MATCH expression, and how a
 * snippet FTS5 cut from the index reads again as the text it came from. Pure: src/domain/search.ts runs the SQL.
 *
 * The index is FTS5's `unicode61` tokenizer (English and every language that spaces its words: whole words, case and
 * diacritics folded). It cannot segment Chinese, Japanese or Korean, so their text is fed to it pre-segmented: each
 * CJK character becomes one token, itself and the next character of its run (`魔法师` → `魔法 法师 师`), each token
 * between two SEPARATORs. A word of two or more CJK characters is then the phrase of its bigrams, and a single
 * character the prefix of a token. Token i starts with character i, so a snippet of the index reads back as the
 * original text by keeping each token's first character and dropping the separators (`snippetOf`).
 */

/** Between the tokens of a CJK run in the indexed text: a control character, a separator to `unicode61`. */
export const SEPARATOR = "\u001f";
/** What FTS5's `snippet()` is asked to put around a match and where it cut the text (`snippetOf` reads them). */
export const MARK_OPEN = "\u0002";
export const MARK_CLOSE = "\u0003";
export const ELLIPSIS = "\u0004";
/** The characters above, which the text itself may not carry into the index (each becomes a space). */
const SENTINELS = new Set([SEPARATOR, MARK_OPEN, MARK_CLOSE, ELLIPSIS]);

/** A query's length, in characters (the issue's bound). */
export const QUERY_MAX_LENGTH = 200;

/**
 * The code points read as CJK (segmented into bigrams), as ranges: kana, CJK ideographs (extension A, the unified
 * block, compatibility ideographs, planes 2 and 3), the iteration marks 々〆〇 and Hangul syllables. The migration
 * that indexed the rows already written (migrations/0015_search.sql) tests the same ranges in SQL: change both.
 */
export const CJK_RANGES: readonly (readonly [number, number])[] = [
  [0x3005, 0x3007],
  [0x3040, 0x30ff],
  [0x31f0, 0x31ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0x20000, 0x3ffff],
];

export const isCjk = (char: string | undefined): boolean => {
  if (char === undefined) return false;
  const cp = char.codePointAt(0)!;
  return CJK_RANGES.some(([from, to]) => cp >= from && cp <= to);
};

/** Each character's piece of the indexed text: a CJK character as its token between separators, a sentinel as a space. */
function pieces(chars: string[]): string[] {
  return chars.map((c, i) => {
    if (isCjk(c)) return `${SEPARATOR}${c}${isCjk(chars[i + 1]) ? chars[i + 1] : ""}${SEPARATOR}`;
    return SENTINELS.has(c) ? " " : c;
  });
}

/** A character `indexText` changes: a CJK one or a sentinel (most English text has none, and is indexed as it is). */
const CHANGED = new RegExp(`[${[...SENTINELS].join("")}${CJK_RANGES.map(([from, to]) => `\\u{${from.toString(16)}}-\\u{${to.toString(16)}}`).join("")}]`, "u");

/** The text as the index is fed it: CJK runs as bigram tokens, everything else as written. */
export const indexText = (text: string): string => (CHANGED.test(text) ? pieces([...text]).join("") : text);

/** A MATCH expression and the CJK bigrams it asks for (a snippet's highlight spans the second character of each). */
export interface MatchQuery {
  match: string;
  bigrams: string[];
}

/** Something `unicode61` makes a token of: a letter, a number, a private-use character. */
const TOKEN_CHAR = /[\p{L}\p{N}\p{Co}]/u;

/**
 * One word of a query as an FTS5 phrase, or null when it has nothing to search for (punctuation only). The word's own
 * characters are always inside the quotes (an inner `"` doubled), so nothing a reader types is FTS5 syntax; only a
 * trailing `*` (the prefix of the word's last token) is written outside them. A word ending in CJK text ends at its
 * last bigram, as the indexed run may go on; a word ending in a single CJK character asks for the tokens it begins.
 */
function phraseOf(word: string, bigrams: Set<string>): string | null {
  const prefix = word.endsWith("*");
  const chars = [...word.replace(/\*+$/u, "")];
  if (!chars.some((c) => TOKEN_CHAR.test(c))) return null;
  const parts = pieces(chars);
  let starred = prefix;
  if (isCjk(chars.at(-1))) {
    if (isCjk(chars.at(-2))) parts.pop();
    else starred = true;
  }
  for (const p of parts) {
    const token = [...p];
    if (token.length === 4 && token[0] === SEPARATOR) bigrams.add(token[1] + token[2]);
  }
  const text = parts.join("").split(SEPARATOR).filter(Boolean).join(" ").trim();
  return `"${text.replaceAll('"', '""')}"${starred ? "*" : ""}`;
}

/**
 * The query `q` (trimmed, at most 200 characters: checked by its field) as an FTS5 expression: every word a phrase,
 * all of them required; null when no word has anything to search for.
 */
export function matchQuery(q: string): MatchQuery | null {
  const bigrams = new Set<string>();
  const phrases = q
    .trim()
    .split(/\s+/u)
    .map((w) => phraseOf(w, bigrams))
    .filter((p) => p !== null);
  return phrases.length ? { match: phrases.join(" "), bigrams: [...bigrams] } : null;
}

/** True when `q` has a word to search for (what its field checks). */
export const hasSearchWords = (q: string) => matchQuery(q) !== null;

/** A snippet: plain text, and the matched spans as [start, end) offsets in characters (code points). */
export interface Snippet {
  snippet: string;
  highlights: [number, number][];
}

/** The longest snippet shown, in characters (a token of thousands of letters would otherwise be shown whole). */
export const SNIPPET_MAX_CHARS = 300;

/**
 * A snippet as FTS5's `snippet()` cut it from the indexed text (marks `MARK_OPEN`/`MARK_CLOSE`, cuts `ELLIPSIS`), as
 * the original text: each CJK token read as its first character, a matched bigram marking its second character too;
 * white space collapsed, the whole at most `SNIPPET_MAX_CHARS` characters.
 */
export function snippetOf(raw: string, bigrams: readonly string[]): Snippet {
  const asked = new Set(bigrams);
  const out: { c: string; hit: boolean }[] = [];
  let marked = false;
  /** The second character of the last CJK token, owed to the text if the next token does not follow (a cut). */
  let owed: { c: string; hit: boolean } | null = null;
  const push = (c: string, hit: boolean) => {
    const space = /\s/u.test(c);
    if (space && (!out.length || /\s/u.test(out.at(-1)!.c))) return;
    out.push({ c: space ? " " : c, hit });
  };
  const settle = () => {
    if (owed) push(owed.c, owed.hit);
    owed = null;
  };
  const chars = [...raw];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === MARK_OPEN || c === MARK_CLOSE) marked = c === MARK_OPEN;
    else if (c === SEPARATOR) continue;
    else if (c === ELLIPSIS) {
      settle();
      push("…", false);
    } else if (isCjk(c)) {
      const second = isCjk(chars[i + 1]) ? chars[++i] : undefined;
      push(c, marked || (owed?.hit ?? false));
      owed = second === undefined ? null : { c: second, hit: marked && asked.has(c + second) };
    } else {
      settle();
      push(c, marked);
    }
  }
  settle();
  while (out.length && out.at(-1)!.c === " ") out.pop();
  return spans(out.length > SNIPPET_MAX_CHARS ? [...out.slice(0, SNIPPET_MAX_CHARS - 1), { c: "…", hit: false }] : out);
}

/** Characters with their marks as the text and its [start, end) spans. */
function spans(chars: { c: string; hit: boolean }[]): Snippet {
  const highlights: [number, number][] = [];
  chars.forEach(({ hit }, i) => {
    if (!hit) return;
    const last = highlights.at(-1);
    if (last && last[1] === i) last[1] = i + 1;
    else highlights.push([i, i + 1]);
  });
  return { snippet: chars.map((x) => x.c).join(""), highlights };
}

/** A snippet as parts to render, each plain or matched (the web page escapes each, MCP's text marks them). */
export function snippetParts({ snippet, highlights }: Snippet): { text: string; hit: boolean }[] {
  const chars = [...snippet];
  const parts: { text: string; hit: boolean }[] = [];
  let at = 0;
  for (const [start, end] of highlights) {
    if (start > at) parts.push({ text: chars.slice(at, start).join(""), hit: false });
    parts.push({ text: chars.slice(start, end).join(""), hit: true });
    at = end;
  }
  if (at < chars.length) parts.push({ text: chars.slice(at).join(""), hit: false });
  return parts;
}
