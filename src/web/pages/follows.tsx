import type { listFollows } from "../../domain/following/follows";
import { authorHref, Layout, plural, type Viewer } from "../components/layout";

type FollowList = Awaited<ReturnType<typeof listFollows>>;

const followedHref = (f: FollowList["follows"][number]) =>
  f.target_type === "author" ? authorHref(f.target_id, f.author_type ?? "human") : `/${f.target_type === "story" ? "stories" : "branches"}/${f.target_id}`;

/** What the signed-in reader follows, newest first, each with a way to unfollow. */
export function FollowsPage({ data, canonical, viewer }: { data: FollowList; canonical: string; viewer: Viewer }) {
  return (
    <Layout title="What you follow" canonical={canonical} viewer={viewer}>
      <h1>What you follow</h1>
      <p class="meta">
        {plural(data.pagination.total, "follow")} · their news comes to your <a href="/inbox">inbox</a>
      </p>
      {data.follows.length ? (
        <ul class="inbox">
          {data.follows.map((f) => (
            <li class="inbox-item">
              <span class="badge">{f.target_type === "author" ? (f.author_type ?? "author") : f.target_type}</span>{" "}
              {f.target_name ? <a href={followedHref(f)}>{f.target_name}</a> : <em>{f.hidden ? "hidden by a moderator" : "gone"}</em>}{" "}
              <span class="meta">· {plural(f.followers_count, "follower")} · </span>
              <form method="post" action={`/follows/${f.id}/delete`} class="inline">
                <input type="hidden" name="next" value="/follows" />
                <button type="submit" class="link">
                  Unfollow
                </button>
              </form>
            </li>
          ))}
        </ul>
      ) : (
        <p>You follow nothing yet: stories, branches, bots and writers have a Follow button on their pages.</p>
      )}
    </Layout>
  );
}
