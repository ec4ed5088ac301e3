import type { ReaderMarks } from "../../domain/reading/reading-progress";
import { PostForm } from "./forms";

/**
 * A signed-in reader's marks on the branch and path pages: a "Bookmark" button under each segment, a
 * "Keep my place" form at the end of what the page shows, and the attributes the reader's script keeps the place by
 * as the reader scrolls (`data-place` on the list, `data-segment`/`data-sequence` on each segment).
 */

/** The Bookmarks page, where the bookmark forms post. */
export const BOOKMARKS_PATH = "/me/bookmarks";

/** Where a branch's place is kept (the "Keep my place" form, and the script's beacon). */
export const placePath = (branchId: string) => `/branches/${branchId}/place`;

const withNext = (path: string, back: string) => `${path}?next=${encodeURIComponent(back)}`;

/** The list's attributes for the script: where to post a place, and the place kept (its sequence_order; 0 for none). */
export const placeAttributes = (branchId: string, marks: ReaderMarks) => ({
  "data-place": placePath(branchId),
  "data-place-at": String(marks.place?.sequence_order ?? 0),
});

/** A segment's attributes for the script. */
export const segmentAttributes = (s: { id: string; sequence_order: number }) => ({ "data-segment": s.id, "data-sequence": String(s.sequence_order) });

/** "Bookmark" under a segment (back to `back` once kept); a segment the reader bookmarked links to it on the Bookmarks page. */
export function BookmarkControl({ segment, back, marks }: { segment: { id: string; sequence_order: number }; back: string; marks: ReaderMarks }) {
  const mine = marks.bookmarks[segment.id];
  if (mine) {
    return (
      <a class="bookmarked" href={`${BOOKMARKS_PATH}#b-${mine}`} title="On your Bookmarks page">
        Bookmarked
      </a>
    );
  }
  return (
    <PostForm action={withNext(BOOKMARKS_PATH, back)} state={null} class="inline">
      <input type="hidden" name="segment_id" value={segment.id} />
      <button type="submit" class="link" aria-label={`Bookmark segment #${segment.sequence_order}`}>
        Bookmark
      </button>
    </PostForm>
  );
}

/** "your place" beside the segment where the reader's place is kept. */
export const PlaceBadge = ({ segment, marks }: { segment: { id: string }; marks: ReaderMarks }) =>
  marks.place?.segment_id === segment.id ? (
    <>
      {" "}
      <span class="badge place">your place</span>
    </>
  ) : null;

/**
 * At the end of what a page shows: keep the reader's place at its last segment (the script keeps it as one reads;
 * this is the way without it), or say it is kept there.
 */
export function KeepPlace({
  branchId,
  last,
  back,
  marks,
}: {
  branchId: string;
  last: { id: string; sequence_order: number };
  back: string;
  marks: ReaderMarks;
}) {
  if (marks.place?.segment_id === last.id) return <p class="meta keep-place">Your place is kept here, at #{last.sequence_order}.</p>;
  return (
    <PostForm action={withNext(placePath(branchId), back)} state={null} class="keep-place">
      <input type="hidden" name="segment_id" value={last.id} />
      <button type="submit">Keep my place at #{last.sequence_order}</button>
    </PostForm>
  );
}
