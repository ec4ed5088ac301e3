import type { listBookmarks } from "../../domain/reading/bookmarks";
import { Fold, FormError, type FormState, PostForm, stateOf, TextArea } from "../components/forms";
import { Author, Layout, Pager, type Viewer, When } from "../components/layout";
import { Shown } from "../components/shown";
import { readHref } from "../support/path-links";
import { BOOKMARKS_PATH } from "../components/reader-marks";

type Bookmarks = Awaited<ReturnType<typeof listBookmarks>>;
type Bookmark = Bookmarks["bookmarks"][number];

/** The Bookmarks page's own address of one bookmark (its anchor). */
export const bookmarkHref = (id: string) => `${BOOKMARKS_PATH}#b-${id}`;

/** The forms of a bookmark on the page: its note, its removal (an error of another form is shown at the top). */
export const noteForm = (id: string) => `note-${id}`;
export const removeForm = (id: string) => `remove-${id}`;

/** Where the bookmarked segment is: its story and branch, linked at the segment on the branch's path page (not when hidden). */
function Where({ b }: { b: Bookmark }) {
  const what = `${b.story_title || "A hidden story"} · ${b.branch_title || "a hidden branch"} · #${b.sequence_order}`;
  return b.branch_title ? <a href={readHref(b.branch_id, b.sequence_order)}>{what}</a> : what;
}

function BookmarkItem({ b, state }: { b: Bookmark; state: FormState | null }) {
  const note = stateOf(state, noteForm(b.id));
  // The note as kept, or as typed when it came back with an error.
  const typed: FormState = note ?? { form: noteForm(b.id), message: "", problems: [], values: { note: b.note ?? "" } };
  return (
    <li id={`b-${b.id}`}>
      <article aria-labelledby={`b-${b.id}-where`}>
        <h2 id={`b-${b.id}-where`}>
          <Where b={b} />
        </h2>
        <div lang={b.language}>
          <Shown class="excerpt" item={{ content: b.excerpt, hidden: b.hidden }} />
        </div>
        <p class="meta">
          by <Author id={b.author_id} name={b.author_name} type={b.author_type} /> · bookmarked <When iso={b.created_at} />
        </p>
        {b.note ? <p class="note">{b.note}</p> : null}
        <div class="segment-actions">
          <Fold summary={b.note ? "Edit the note" : "Add a note"} state={note}>
            <PostForm action={`${BOOKMARKS_PATH}?next=${encodeURIComponent(bookmarkHref(b.id))}`} state={note}>
              <input type="hidden" name="segment_id" value={b.segment_id} />
              <input type="hidden" name="bookmark_id" value={b.id} />
              <TextArea id={`note-${b.id}`} name="note" label="Note (empty: none)" state={typed} maxlength={1000} rows={3} />
              <button type="submit">Save the note</button>
            </PostForm>
          </Fold>
          <PostForm action={`${BOOKMARKS_PATH}/${b.id}/delete`} state={stateOf(state, removeForm(b.id))} class="inline">
            <button type="submit" class="link" aria-label={`Remove the bookmark on #${b.sequence_order}`}>
              Remove
            </button>
          </PostForm>
        </div>
      </article>
    </li>
  );
}

/** "Bookmarks": the reader's bookmarks, newest first, each with where it is, its text, the note; edit, remove. */
export function BookmarksPage(props: { data: Bookmarks; page: number; cap: number; canonical: string; viewer: Viewer; state: FormState | null }) {
  const { data, page, cap, canonical, viewer, state } = props;
  const { bookmarks, pagination } = data;
  const pages = Math.max(1, Math.ceil(pagination.total / pagination.limit));
  const claimed = new Set(bookmarks.flatMap((b) => [noteForm(b.id), removeForm(b.id)]));
  return (
    <Layout title={page > 1 ? `Bookmarks, page ${page}` : "Bookmarks"} canonical={canonical} viewer={viewer} error={!!state}>
      <h1>Bookmarks</h1>
      <FormError state={state && !claimed.has(state.form) ? state : null} />
      <p>
        The segments you bookmarked, newest first, with your notes ({pagination.total} of at most {cap}). Bookmark a segment with the "Bookmark" under it, on a
        branch's page or its path page.
      </p>
      {bookmarks.length ? (
        <ol class="bookmarks">
          {bookmarks.map((b) => (
            <BookmarkItem b={b} state={state} />
          ))}
        </ol>
      ) : (
        <p>{page > 1 ? "No bookmarks on this page." : "No bookmarks yet."}</p>
      )}
      <Pager
        page={page}
        of={pages}
        hasMore={pagination.has_more}
        href={(n) => (n > 1 ? `${BOOKMARKS_PATH}?page=${n}` : BOOKMARKS_PATH)}
        before="← Newer"
        after="Older →"
      />
    </Layout>
  );
}
