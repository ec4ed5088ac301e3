import type { InboxItem } from "../../domain/following/inbox";
import { Layout, Pager, pagesOf, plural, READER_SCRIPT, type Viewer, When } from "../components/layout";
import { itemHref } from "../support/inbox-links";

/** The page's way to mark items read: one item (`ids`), or everything up to the newest item shown (`up_to`). */
function ReadForm({ field, value, label, next }: { field: "ids" | "up_to"; value: string; label: string; next: string }) {
  return (
    <form method="post" action="/inbox/read" class="inline">
      <input type="hidden" name={field} value={value} />
      <input type="hidden" name="next" value={next} />
      <button type="submit" class={field === "ids" ? "link" : undefined}>
        {label}
      </button>
    </form>
  );
}

export interface InboxPageData {
  items: InboxItem[];
  unread_count: number;
  pagination: { total: number; limit: number; offset: number; has_more: boolean };
}

/** The inbox's private feed on its page: since when it has an address, and the address itself when just made. */
export interface InboxFeedState {
  since: string | null;
  url: string | null;
}

/**
 * The signed-in reader's inbox, newest activity first: each item in words, linked to what it is about, with a
 * quote when it has one; unread ones marked, and read one by one or all at once. Live: the reader's script asks
 * `/inbox/status` every few seconds and redraws the list when something new came (`data-status`, `data-latest`).
 */
export function InboxPage({
  data,
  feed,
  page,
  unreadOnly,
  canonical,
  here,
  viewer,
}: {
  data: InboxPageData;
  feed: InboxFeedState;
  page: number;
  unreadOnly: boolean;
  canonical: string;
  here: string;
  viewer: Viewer;
}) {
  const { items, unread_count, pagination } = data;
  const newest =
    items
      .map((i) => i.updated_at)
      .sort()
      .at(-1) ?? "";
  const pageHref = (n: number) => `/inbox?${new URLSearchParams({ ...(unreadOnly ? { unread: "true" } : {}), ...(n > 1 ? { page: String(n) } : {}) })}`;
  return (
    <Layout title="Inbox" canonical={canonical} viewer={viewer} scripts={[READER_SCRIPT]}>
      <h1>Inbox</h1>
      <div id="inbox">
        <p class="meta" id="inbox-summary">
          {plural(unread_count, "unread item")} · {unreadOnly ? <a href="/inbox">show everything</a> : <a href="/inbox?unread=true">unread only</a>} ·{" "}
          <a href="/follows">what you follow</a>{" "}
          <span id="live-status" class="badge" role="status" hidden>
            Connecting…
          </span>
        </p>
        {unread_count && newest ? <ReadForm field="up_to" value={newest} label="Mark all read" next={here} /> : null}
        {items.length ? (
          <ol class="inbox" id="inbox-items" data-status="/inbox/status" data-latest={newest}>
            {items.map((item) => (
              <li class={item.unread ? "inbox-item unread" : "inbox-item"} id={`i-${item.id}`}>
                <a href={itemHref(item)}>{item.message}</a>
                {item.segment?.excerpt || item.comment?.excerpt ? <p class="excerpt">{item.comment?.excerpt || item.segment?.excerpt}</p> : null}
                <div class="meta">
                  {item.hidden ? "part of it was hidden by a moderator · " : ""}
                  <When iso={item.updated_at} />
                  {item.unread ? (
                    <>
                      {" "}
                      · <span class="visually-hidden">unread · </span>
                      <ReadForm field="ids" value={item.id} label="Mark read" next={here} />
                    </>
                  ) : null}
                </div>
              </li>
            ))}
          </ol>
        ) : (
          <p id="inbox-items" data-status="/inbox/status" data-latest="">
            {unreadOnly ? "Nothing unread." : "Nothing here yet: follow a story, a branch or a writer, and their news comes here."}
          </p>
        )}
        <Pager page={page} of={pagesOf(pagination)} hasMore={pagination.has_more} href={pageHref} before="← Newer" after="Older →" />
      </div>
      <InboxFeed feed={feed} />
    </Layout>
  );
}

/**
 * The inbox as a private Atom feed, for a feed reader (which sends no credential): its address holds a token, shown
 * once when made (kept hashed); making another stops the old one, as revoking does.
 */
function InboxFeed({ feed }: { feed: InboxFeedState }) {
  return (
    <section aria-labelledby="inbox-feed" class="inbox-feed">
      <h2 id="inbox-feed">Your inbox as a feed</h2>
      <p>A private Atom feed of your inbox, for a feed reader. Its address is its key: keep it to yourself. It quotes only what anyone may read.</p>
      {feed.url ? (
        <div class="notice" role="status">
          <p>Your feed's address, shown only this once: copy it into your feed reader.</p>
          <p>
            <a href={feed.url} id="feed-url" type="application/atom+xml">
              {feed.url}
            </a>
          </p>
        </div>
      ) : feed.since ? (
        <p class="meta">
          Your feed's address was made <When iso={feed.since} />; it is not shown again.
        </p>
      ) : null}
      <form method="post" action="/inbox/feed" class="inline">
        <button type="submit">{feed.since ? "Make a new address (the old one stops)" : "Make a feed address"}</button>
      </form>{" "}
      {feed.since ? (
        <form method="post" action="/inbox/feed/revoke" class="inline">
          <button type="submit">Revoke the address</button>
        </form>
      ) : null}
    </section>
  );
}
