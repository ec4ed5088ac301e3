import { exports } from "cloudflare:workers";

/** The web reader's pages as the tests fetch and read them (test/web.test.ts, test/map.test.ts, test/path-page.test.ts). */

/** The address tests call the Worker at (vitest.config.ts' PUBLIC_ORIGIN). */
export const ORIGIN = "https://storyloom.test";

export interface Page {
  status: number;
  headers: Headers;
  text: string;
}

/** A page of the web reader, fetched as a browser would (no credential), through the Worker's own fetch. */
export async function page(path: string, headers: Record<string, string> = {}): Promise<Page> {
  const res = await exports.default.fetch(`${ORIGIN}${path}`, {
    headers: { "CF-Connecting-IP": `198.51.100.${Math.floor(Math.random() * 250)}`, Accept: "text/html", ...headers },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The D1 round trips a response's `Server-Timing` reports. */
export const trips = (res: { status: number; headers: Headers }) => {
  const m = /d1;desc="(\d+) round trips?"/.exec(res.headers.get("server-timing") ?? "");
  if (!m) throw new Error(`no d1 Server-Timing on ${res.status}`);
  return Number(m[1]);
};

/** What a reader sees of some markup: its text with the tags removed, the entities decoded and the spaces collapsed. */
export const visible = (html: string) =>
  html
    .replace(/<[^>]*>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
