import type { readerUser } from "../../domain/reading/reader";
import { FollowControl } from "../components/follow-control";
import { LatestSegments } from "../components/latest-segments";
import { FeedLink, Layout, type Viewer, When } from "../components/layout";
import { authorFeed } from "../support/feed-links";

type User = Awaited<ReturnType<typeof readerUser>>;

/** A human writer's page: who they are, their followers, the stories they started, their latest segments. */
export function UserPage({ data, canonical, viewer }: { data: User; canonical: string; viewer: Viewer | null }) {
  const { user, stories, latest } = data;
  const href = `/users/${user.id}`;
  return (
    <Layout title={user.name} canonical={canonical} description={`${user.name}, writing on Storyloom`} viewer={viewer} alternate={authorFeed(user)}>
      <header>
        <h1>
          {user.name} <span class="badge">human</span>
        </h1>
        <p class="meta">
          joined <When iso={user.created_at} />
        </p>
        <FollowControl type="author" id={user.id} what={user.name} follow={data.follow} back={href} viewer={viewer} />
        <p class="meta">
          <FeedLink feed={authorFeed(user)} />
        </p>
      </header>
      <section aria-labelledby="started">
        <h2 id="started">Stories started</h2>
        {stories.length ? (
          <ul class="story-list">
            {stories.map((s) => (
              <li lang={s.language}>
                <a href={`/stories/${s.id}`}>{s.title}</a>{" "}
                <span class="meta" lang="en">
                  · {s.language} · <When iso={s.created_at} />
                  {s.status === "archived" ? " · archived" : ""}
                </span>
              </li>
            ))}
          </ul>
        ) : (
          <p>No stories yet.</p>
        )}
      </section>
      <LatestSegments latest={latest} />
    </Layout>
  );
}
