import type { InboxItem } from "../../domain/following/inbox";

/** Where an item leads on the reader: the segment, comment, branch or story it is about. */
export function itemHref(item: InboxItem): string {
  const branch = item.branch ? `/branches/${item.branch.id}` : `/stories/${item.story.id}`;
  if (item.comment) return `${branch}#c-${item.comment.id}`;
  if (item.segment && (item.kind === "new_segments" || item.moderation?.target_type === "segment")) return `${branch}#s-${item.segment.id}`;
  if (item.kind === "new_story" || item.moderation?.target_type === "story" || (item.kind === "new_branches" && item.count > 1)) {
    return `/stories/${item.story.id}`;
  }
  return branch;
}
