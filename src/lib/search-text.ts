/**
 * Full-text search's text: what the FTS5 index is fed, how a query becomes a MATCH expression, and how a
 * snippet FTS5 cut from the index reads again as the text it came from. Pure: src/domain/discovery/search.ts runs the SQL.
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

/** A query's length, in characters (the bound). */
export const QUERY_MAX_LENGTH = 200;

/**
 * The code points read as CJK (segmented into bigrams), as ranges: kana, CJK ideographs (extension A, the unified
 * block, compatibility ideographs, planes 2 and 3), the iteration marks 々〆〇 and Hangul syllables. The migration
 * that indexed the rows already written (migrations/0018_search.sql) tests the same ranges in SQL: change both.
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

/** The ranges as a regular expression's character class (`u` flag). */
const CJK_CLASS = CJK_RANGES.map(([from, to]) => `\\u{${from.toString(16)}}-\\u{${to.toString(16)}}`).join("");
const CJK_CHAR = new RegExp(`^[${CJK_CLASS}]`, "u");
/** A CJK character, and the next one when it is CJK too (`$2`, empty at a run's end); a sentinel. */
const CJK_TOKEN = new RegExp(`([${CJK_CLASS}])(?=([${CJK_CLASS}])?)`, "gu");
const SENTINEL = new RegExp(`[${[...SENTINELS].join("")}]`, "gu");

export const isCjk = (char: string | undefined): boolean => char !== undefined && CJK_CHAR.test(char);

/**
 * The text as the index is fed it: each CJK character as its token (itself and the next character of its run) between
 * separators, a sentinel as a space, everything else as written.
 */
export const indexText = (text: string): string => text.replace(SENTINEL, " ").replace(CJK_TOKEN, `${SEPARATOR}$1$2${SEPARATOR}`);

/** A MATCH expression and the CJK bigrams it asks for (a snippet's highlight spans the second character of each). */
export interface MatchQuery {
  match: string;
  /** The expression's phrases, each a MATCH expression of its own (bm25 sums one term a phrase). */
  phrases: string[];
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
  const bare = word.replace(/\*+$/u, "");
  if (!TOKEN_CHAR.test(bare)) return null;
  let starred = bare !== word;
  let text = indexText(bare);
  const chars = [...bare];
  if (isCjk(chars.at(-1))) {
    // The last token is the run's last character alone: a longer run drops it, a single character is a prefix.
    if (isCjk(chars.at(-2))) text = text.slice(0, text.lastIndexOf(SEPARATOR, text.length - 2));
    else starred = true;
  }
  const tokens = text.split(SEPARATOR).filter(Boolean);
  for (const t of tokens) if (isCjk(t) && [...t].length === 2) bigrams.add(t);
  return `"${tokens.join(" ").trim().replaceAll('"', '""')}"${starred ? "*" : ""}`;
}

/** Control characters (NUL among them): SQLite reads a MATCH expression as a C string, so a NUL would cut it short. */
const CONTROL = /\p{Cc}/gu;

/**
 * The query `q` (trimmed, at most 200 characters: checked by its field) as an FTS5 expression: every word a phrase,
 * all of them required, control characters read as spaces; null when no word has anything to search for.
 */
export function matchQuery(q: string): MatchQuery | null {
  const bigrams = new Set<string>();
  const phrases = q
    .replace(CONTROL, " ")
    .trim()
    .split(/\s+/u)
    .map((w) => phraseOf(w, bigrams))
    .filter((p) => p !== null);
  return phrases.length ? { match: phrases.join(" "), phrases, bigrams: [...bigrams] } : null;
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

/** A piece of a snippet as FTS5 cut it: a mark, a cut, a separator, a CJK token, or other text. */
const SNIPPET_PIECE = new RegExp(
  `[${MARK_OPEN}${MARK_CLOSE}${ELLIPSIS}${SEPARATOR}]|[${CJK_CLASS}]+|[^${MARK_OPEN}${MARK_CLOSE}${ELLIPSIS}${SEPARATOR}${CJK_CLASS}]+`,
  "gu",
);

/** Code points in a string (a surrogate pair is one). */
const charCount = (text: string) => {
  let n = text.length;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0xdc00 && text.charCodeAt(i) <= 0xdfff) n--;
  return n;
};

/**
 * A snippet as FTS5's `snippet()` cut it from the indexed text (marks `MARK_OPEN`/`MARK_CLOSE`, cuts `ELLIPSIS`), as
 * the original text: each CJK token read as its first character, a matched bigram marking its second character too;
 * white space collapsed, the whole at most `SNIPPET_MAX_CHARS` characters.
 */
export function snippetOf(raw: string, bigrams: readonly string[]): Snippet {
  const asked = new Set(bigrams);
  let text = "";
  let at = 0;
  const highlights: [number, number][] = [];
  const emit = (piece: string, hit: boolean) => {
    let t = piece.replace(/\s+/gu, " ");
    if (t[0] === " " && (at === 0 || text.endsWith(" "))) t = t.slice(1);
    if (!t) return;
    const n = charCount(t);
    const last = highlights.at(-1);
    if (hit && last && last[1] === at) last[1] = at + n;
    else if (hit) highlights.push([at, at + n]);
    text += t;
    at += n;
  };
  let marked = false;
  /** The second character of the last CJK token, owed to the text if the next token does not follow (a cut). */
  let owed: { c: string; hit: boolean } | null = null;
  const settle = () => {
    if (owed) emit(owed.c, owed.hit);
    owed = null;
  };
  for (const [piece] of raw.matchAll(SNIPPET_PIECE)) {
    if (piece === MARK_OPEN || piece === MARK_CLOSE) marked = piece === MARK_OPEN;
    else if (piece === SEPARATOR) continue;
    else if (piece === ELLIPSIS) {
      settle();
      emit("…", false);
    } else if (isCjk(piece)) {
      const [first, second, ...more] = [...piece];
      emit(first, marked || (owed?.hit ?? false));
      owed = second === undefined ? null : { c: second, hit: marked && asked.has(first + second) };
      if (more.length) emit(more.join(""), marked); // never cut so; kept as text
    } else {
      settle();
      emit(piece, marked);
    }
  }
  settle();
  if (text.endsWith(" ")) {
    text = text.slice(0, -1);
    at--;
  }
  return at > SNIPPET_MAX_CHARS ? cut({ snippet: text, highlights }) : { snippet: text, highlights };
}

/** A snippet over `SNIPPET_MAX_CHARS` characters, cut there (its last one an ellipsis), its spans with it. */
function cut({ snippet, highlights }: Snippet): Snippet {
  const end = SNIPPET_MAX_CHARS - 1;
  return {
    snippet: `${[...snippet].slice(0, end).join("")}…`,
    highlights: highlights.filter(([start]) => start < end).map(([start, stop]) => [start, Math.min(stop, end)]),
  };
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
