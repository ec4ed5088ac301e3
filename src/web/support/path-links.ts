import { PATH_PAGE_SEGMENTS } from "../../domain/reading/path-page";

/** The page of a path page that holds the segment at `sequence` (pages are fixed windows of sequence_order). */
export const pathPageOf = (sequence: number) => Math.max(1, Math.ceil(sequence / PATH_PAGE_SEGMENTS));

/**
 * A branch's path page (`/branches/{id}/read`), or the segment at `sequence` on it: its page and its anchor, so the
 * link opens at that segment.
 */
export function readHref(branchId: string, sequence?: number) {
  const base = `/branches/${branchId}/read`;
  if (sequence === undefined) return base;
  const page = pathPageOf(sequence);
  return `${page > 1 ? `${base}?page=${page}` : base}#s-${sequence}`;
}
