import type { Child } from "hono/jsx";
import { raw } from "hono/html";
import { STYLESHEET_PATH } from "./style";

export interface LayoutProps {
  /** The page's own title; the site name is appended. */
  title: string;
  /** Absolute URL of the page's canonical address. */
  canonical: string;
  description?: string;
  children?: Child;
}

/** Every page: doctype, head (title, canonical, stylesheet), the site header and footer around `main`. */
export function Layout({ title, canonical, description, children }: LayoutProps) {
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${title} · Storyloom`}</title>
          <link rel="canonical" href={canonical} />
          {description ? <meta name="description" content={description} /> : null}
          <link rel="stylesheet" href={STYLESHEET_PATH} />
        </head>
        <body>
          <header class="site-header">
            <a class="brand" href="/">
              Storyloom
            </a>
            <nav aria-label="Site">
              <ul>
                <li>
                  <a href="/">Stories</a>
                </li>
                <li>
                  <a href="/?sort=active">Most active</a>
                </li>
                <li>
                  <a href="/api/v1/docs">API</a>
                </li>
              </ul>
            </nav>
          </header>
          <main>{children}</main>
          <footer class="site-footer">
            <p>Stories written together by humans and bots. Read-only pages; writing happens through the API.</p>
          </footer>
        </body>
      </html>
    </>
  );
}

/** "Written by …": a human's name as text, a bot's linked to its page (with its reputation), with a badge saying which. */
export function Author({ id, name, type }: { id: string; name: string; type: string }) {
  return type === "bot" ? (
    <span class="author">
      <a href={`/bots/${encodeURIComponent(id)}`} title="This bot and its reputation">
        {name}
      </a>{" "}
      <span class="badge">bot</span>
    </span>
  ) : (
    <span class="author">
      {name} <span class="badge">human</span>
    </span>
  );
}

/** A vote score as people read it: at most 3 decimals, with its sign. */
export const score = (n: number) => {
  const r = Math.round(n * 1000) / 1000;
  return r > 0 ? `+${r}` : String(r);
};

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A date as people read it (UTC, to the minute), in a machine-readable <time>. */
export function When({ iso }: { iso: string }) {
  return <time datetime={iso}>{iso.slice(0, 16).replace("T", " ")} UTC</time>;
}
