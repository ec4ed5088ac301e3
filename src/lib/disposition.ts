/**
 * `Content-Disposition: attachment` for a file named after a title (RFC 6266): `filename` in printable ASCII for
 * every client, and `filename*` (RFC 8187, UTF-8) with the title as written, which browsers prefer. Characters no
 * file system takes in a name (slashes, colons, quotes, controls, format characters) become `-` in both.
 */
const NOT_IN_NAMES = /[\\/:*?"<>|\p{Cc}\p{Cf}]+/gu;
const NOT_ASCII_SAFE = /[^A-Za-z0-9 ._()'&,+-]+/g;

/** Percent-encoding as RFC 8187's `value-chars` allow (encodeURIComponent leaves `'()*` and `!` as they are). */
const ext = (text: string) => encodeURIComponent(text).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const tidy = (name: string) =>
  name
    .replace(/-{2,}/g, "-")
    .replace(/^[-. ]+|[-. ]+$/g, "")
    .slice(0, 120);

export function attachment(title: string, extension: string, fallback = "story"): string {
  const name = tidy(title.normalize("NFC").replace(NOT_IN_NAMES, "-")) || fallback;
  // Accents dropped (NFKD, then the combining marks), anything else outside ASCII a `-`.
  const ascii =
    tidy(
      name
        .normalize("NFKD")
        .replace(/\p{M}+/gu, "")
        .replace(NOT_ASCII_SAFE, "-"),
    ) || fallback;
  return `attachment; filename="${ascii}.${extension}"; filename*=UTF-8''${ext(`${name}.${extension}`)}`;
}
