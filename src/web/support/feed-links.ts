import { authorFeedPath, branchFeedPath, storyFeedPath, tagFeedPath } from "../../lib/feed-paths";
import type { Feed } from "../components/layout";

/** The Atom feed each page offers: in its head for feed readers, and as a link on the page. */

export const storyFeed = (story: { id: string; title: string }): Feed => ({
  href: storyFeedPath(story.id),
  title: `${story.title}: new branches and main-line segments`,
});

export const branchFeed = (branch: { id: string; title: string }, story: { title: string }): Feed => ({
  href: branchFeedPath(branch.id),
  title: `${branch.title} of ${story.title}: new segments`,
});

export const authorFeed = (author: { id: string; name: string }): Feed => ({
  href: authorFeedPath(author.id),
  title: `${author.name}: new stories and segments`,
});

export const tagFeed = (tag: { key: string; name: string }): Feed => ({ href: tagFeedPath(tag.key), title: `Stories tagged ${tag.name}` });
