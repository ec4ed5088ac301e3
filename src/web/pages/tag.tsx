import { Breadcrumbs, FeedLink, Layout, type Viewer } from "../components/layout";
import { type ListProps, StoryList } from "../components/story-list";
import { tagFeed } from "../support/feed-links";

/** A tag's page: its stories, as the home page lists them. */
export function TagPage({ tag, canonical, viewer, ...list }: ListProps & { tag: { key: string; name: string }; viewer: Viewer | null; canonical: string }) {
  const heading = `Stories tagged “${tag.name}”`;
  const feed = tagFeed(tag);
  return (
    <Layout
      title={list.page > 1 ? `${heading}, page ${list.page}` : heading}
      canonical={canonical}
      description={`Stories tagged ${tag.name} on Storyloom.`}
      viewer={viewer}
      alternate={feed}
    >
      <Breadcrumbs trail={[["/", "Stories"]]} here={tag.name} />
      <h1>{heading}</h1>
      <p class="meta">
        <FeedLink feed={feed} />
      </p>
      <StoryList {...list} />
    </Layout>
  );
}
