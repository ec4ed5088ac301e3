import type { FollowTarget } from "../../schemas/follows";
import { plural, type Viewer } from "./layout";

/** A target's followers and the viewer's own follow of it (`followStateQuery`, read with the page). */
export interface FollowState {
  followers: number;
  mine: string | null;
}

/**
 * What following a target brings, said next to its button (and tied to it as its description), so a reader knows
 * before following what will reach their inbox.
 */
export const FOLLOW_BRINGS: Record<FollowTarget, string> = {
  story: "new segments on its main line and new branches, in your inbox",
  branch: "new segments on this branch, in your inbox",
  author: "their new stories, segments and branches, in your inbox",
};

/**
 * "Follow" (or "Unfollow") on a story, branch, bot or writer page, with the number of followers: a form posted to
 * the page's own site (Origin-checked, src/web/routes/follows.tsx) that comes back to `back`. Anyone signed out is
 * offered a way to log in; one's own page shows the count alone.
 */
export function FollowControl({
  type,
  id,
  what,
  follow,
  back,
  viewer,
}: {
  type: FollowTarget;
  id: string;
  what: string;
  follow: FollowState;
  back: string;
  viewer: Viewer | null;
}) {
  const count = <span class="meta follow-count">{plural(follow.followers, "follower")}</span>;
  const describedBy = `follow-brings-${type}`;
  const brings = (
    <span class="meta follow-brings" id={describedBy}>
      {FOLLOW_BRINGS[type]}
    </span>
  );
  if (!viewer || viewer.id === id) {
    return (
      <p class="follow">
        {count}
        {viewer ? null : (
          <>
            {" "}
            · <a href={`/login?next=${encodeURIComponent(back)}`}>Log in to follow</a>: {FOLLOW_BRINGS[type]}
          </>
        )}
      </p>
    );
  }
  return (
    <div class="follow">
      {follow.mine ? (
        <form method="post" action={`/follows/${follow.mine}/delete`} class="inline">
          <input type="hidden" name="next" value={back} />
          {/* Its name holds its visible words (a name that leaves them out fails axe's label-content-name-mismatch). */}
          <button type="submit" aria-pressed="true" aria-label={`Following · Unfollow ${what}`} aria-describedby={describedBy}>
            Following · Unfollow
          </button>
        </form>
      ) : (
        <form method="post" action="/follows" class="inline">
          <input type="hidden" name="target_type" value={type} />
          <input type="hidden" name="target_id" value={id} />
          <input type="hidden" name="next" value={back} />
          <button type="submit" aria-pressed="false" aria-label={`Follow ${what}`} aria-describedby={describedBy}>
            Follow
          </button>
        </form>
      )}
      {brings}
      {count}
    </div>
  );
}
