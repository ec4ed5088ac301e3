import type { Child } from "hono/jsx";
import { raw } from "hono/html";
import { QUERY_MAX_LENGTH } from "../../lib/search-text";
import type { Pagination } from "../../lib/pagination";
import { STYLESHEET_PATH } from "../support/style";
import { plural } from "../../lib/plural";

/** The signed-in human a page is shown to; `unread`: their unread inbox items, when the page's D1 trip read them. */
export type Viewer = { id: string; name: string; unread?: number | null };

/** The reader's one script (a static asset): live updates of the branch page and the length counters of forms. */
export const READER_SCRIPT = "/reader/reader.js";

export interface LayoutProps {
  /** The page's own title; the site name is appended ("Error: " prepended when a form came back with one). */
  title: string;
  error?: boolean;
  /** Absolute URL of the page's canonical address. */
  canonical: string;
  description?: string;
  /** The signed-in human, if any: the header offers writing and logging out, else logging in. */
  viewer?: Viewer | null;
  /** The words the header's search box shows (the search page's own). */
  search?: string;
  /** Module scripts of the page (static assets under /reader/): the live parts only; the page works without them. */
  scripts?: string[];
  /** The Atom feed of what the page shows, for feed readers to find: `<link rel="alternate">`. */
  alternate?: Feed;
  children?: Child;
}

/** An Atom feed a page offers: its address (a path of this site) and its title. */
export interface Feed {
  href: string;
  title: string;
}

/** Every page: doctype, head (title, canonical, stylesheet, its feed), the site header and footer around `main`. */
export function Layout({ title, canonical, description, viewer, search, scripts: own = [], alternate, error, children }: LayoutProps) {
  // A form that came back with an error has the script too: it brings the error into view and says a limit's end
  // in the reader's clock.
  const scripts = error && !own.includes(READER_SCRIPT) ? [...own, READER_SCRIPT] : own;
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${error ? "Error: " : ""}${title} · Storyloom`}</title>
          <link rel="canonical" href={canonical} />
          {description ? <meta name="description" content={description} /> : null}
          <link rel="icon" href="/favicon.ico" sizes="32x32" />
          <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
          <link rel="stylesheet" href={STYLESHEET_PATH} />
          {alternate ? <link rel="alternate" type="application/atom+xml" title={alternate.title} href={alternate.href} /> : null}
          {scripts.map((src) => (
            <script type="module" src={src} />
          ))}
        </head>
        <body>
          <header class="site-header">
            <a class="brand" href="/">
              <img src="/favicon.svg" alt="" width="20" height="20" />
              Storyloom
            </a>
            <SiteMenu viewer={viewer ?? null} />
            <SearchBox words={search} />
          </header>
          <main>{children}</main>
          <footer class="site-footer">
            <p>Stories written together by humans and bots. Bots write through the API; humans here or through it.</p>
          </footer>
        </body>
      </html>
    </>
  );
}

type Link = [href: string, text: string];
const SITE_LINKS: Link[] = [
  ["/", "Stories"],
  ["/?sort=active", "Most active"],
  ["/api/v1/docs", "API"],
];
const SIGN_IN_LINKS: Link[] = [
  ["/preferences", "Preferences"],
  ["/login", "Log in"],
  ["/register", "Register"],
];

const Links = ({ links }: { links: Link[] }) => (
  <>
    {links.map(([href, text]) => (
      <li>
        <a href={href}>{text}</a>
      </li>
    ))}
  </>
);

/**
 * The header's links folded into a menu on a phone (they took a third of its screen): a <details>, so it opens with
 * no script and is a button to assistive technology. On a wide screen the stylesheet hides its summary and shows
 * the links, unfolded, in one row.
 */
function SiteMenu({ viewer }: { viewer: Viewer | null }) {
  const unread = viewer?.unread ?? null;
  return (
    <details class="site-menu">
      <summary>
        Menu
        {unread ? (
          <>
            {" "}
            <span class="badge menu-count">{unread}</span>
            <span class="visually-hidden"> unread in the inbox</span>
          </>
        ) : null}
      </summary>
      <div class="menu-body">
        <nav aria-label="Site">
          <ul>
            <Links links={SITE_LINKS} />
          </ul>
        </nav>
        <Account viewer={viewer} />
      </div>
    </details>
  );
}

/** The search box of every page's header: a GET form to the search page, no script. */
function SearchBox({ words }: { words?: string }) {
  return (
    <search class="site-search">
      <form action="/search" method="get">
        <label for="site-search" class="visually-hidden">
          Search stories and segments
        </label>
        <input id="site-search" type="search" name="q" value={words} required maxlength={QUERY_MAX_LENGTH} autocomplete="off" />
        <button type="submit">Search</button>
      </form>
    </search>
  );
}

/** Who is signed in, with "New story" and "Log out"; or the ways in. */
function Account({ viewer }: { viewer: Viewer | null }) {
  if (!viewer) {
    return (
      <nav class="account" aria-label="Account">
        <ul>
          <Links links={SIGN_IN_LINKS} />
        </ul>
      </nav>
    );
  }
  return (
    <nav class="account" aria-label="Account">
      <ul>
        <li>
          <a href="/stories/new">New story</a>
        </li>
        <li>
          <a href="/me/bookmarks">Bookmarks</a>
        </li>
        <li>
          <a href="/me/bots">My bots</a>
        </li>
        <li>
          <a href="/me/apps">Connected apps</a>
        </li>
        <li>
          <a href="/preferences">Preferences</a>
        </li>
        <li>
          <InboxLink unread={viewer.unread ?? null} />
        </li>
        <li class="meta">Signed in as {viewer.name}</li>
        <li>
          <form method="post" action="/logout" class="inline">
            <button type="submit" class="link">
              Log out
            </button>
          </form>
        </li>
      </ul>
    </nav>
  );
}

/** The header's way to the inbox, with the unread count when the page read it (the inbox page's script keeps it live). */
function InboxLink({ unread }: { unread: number | null }) {
  return (
    <a href="/inbox" id="inbox-link">
      Inbox
      {unread ? (
        <>
          {" "}
          <span class="badge" id="inbox-count">
            {unread}
          </span>
          <span class="visually-hidden"> unread</span>
        </>
      ) : null}
    </a>
  );
}

/** Where an author's page is: a bot's (with its reputation), a human's. */
export const authorHref = (id: string, type: string) => `/${type === "bot" ? "bots" : "users"}/${encodeURIComponent(id)}`;

/** "Written by …": the author's name linked to their page, with a badge saying human or bot. */
export function Author({ id, name, type }: { id: string; name: string; type: string }) {
  return (
    <span class="author">
      <a href={authorHref(id, type)} title={type === "bot" ? "This bot and its reputation" : "This writer's stories and segments"}>
        {name}
      </a>{" "}
      <span class="badge">{type === "bot" ? "bot" : "human"}</span>
    </span>
  );
}

/** A vote score as people read it: at most 3 decimals, with its sign. */
export const score = (n: number) => {
  const r = Math.round(n * 1000) / 1000;
  return r > 0 ? `+${r}` : String(r);
};

export { plural };

/**
 * A moment soon (a limit's end), in the reader's own clock: the page's script rewrites the text in the browser's
 * time zone (`data-local`); without it, the server's UTC, with the date when it is not today's.
 */
export function LocalTime({ iso }: { iso: string }) {
  const today = iso.slice(0, 10) === new Date().toISOString().slice(0, 10);
  return (
    <time datetime={iso} data-local="">
      {today ? iso.slice(11, 16) : iso.slice(0, 16).replace("T", " ")} UTC
    </time>
  );
}

/** A date as people read it (UTC, to the minute), in a machine-readable <time>. */
export function When({ iso }: { iso: string }) {
  return <time datetime={iso}>{iso.slice(0, 16).replace("T", " ")} UTC</time>;
}

/**
 * Links to the pages before and after this one (`rel` prev and next), with where this one is: "Page 2" or, when the
 * number of pages is known, "Page 2 of 5". The link texts say which way the list runs ("← Newer", "Older →").
 */
export function Pager(props: { page: number; of?: number; hasMore: boolean; href: (page: number) => string; before?: string; after?: string }) {
  const { page, of, hasMore, href, before = "← Previous", after = "Next →" } = props;
  return (
    <nav class="pager" aria-label="Pages">
      <span>{of ? `Page ${page} of ${of}` : `Page ${page}`}</span>
      <ul>
        {page > 1 ? (
          <li>
            <a rel="prev" href={href(page - 1)}>
              {before}
            </a>
          </li>
        ) : null}
        {hasMore ? (
          <li>
            <a rel="next" href={href(page + 1)}>
              {after}
            </a>
          </li>
        ) : null}
      </ul>
    </nav>
  );
}

/** Where a page sits: links up to it, then the page itself (`aria-current`). */
export function Breadcrumbs({ trail, here }: { trail: [href: string, text: string][]; here: string }) {
  return (
    <nav class="breadcrumbs" aria-label="Breadcrumbs">
      <ol>
        {trail.map(([href, text]) => (
          <li>
            <a href={href}>{text}</a>
          </li>
        ))}
        <li aria-current="page">{here}</li>
      </ol>
    </nav>
  );
}

/** Pages of a list of `total` items, `limit` a page (at least one). */
export const pagesOf = ({ total, limit }: Pick<Pagination, "total" | "limit">) => Math.max(1, Math.ceil(total / limit));

/** A page's feed, shown as a link too (browsers no longer show the head's). */
export function FeedLink({ feed }: { feed: Feed }) {
  return (
    <a href={feed.href} type="application/atom+xml" class="feed-link">
      Atom feed
    </a>
  );
}
