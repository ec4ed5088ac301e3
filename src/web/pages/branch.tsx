import type { readerBranch, ReaderComment } from "../../domain/reading/reader";
import { Comments, type LengthRule, NoWriting, type Reporting, SegmentActions, type Writing, WriteForm } from "../components/branch-forms";
import { FormError, type FormState, PostForm, stateOf, TextArea, VoteButtons } from "../components/forms";
import { FollowControl } from "../components/follow-control";
import { Author, Breadcrumbs, FeedLink, Layout, plural, READER_SCRIPT, score, type Viewer, When } from "../components/layout";
import { KeepPlace, PlaceBadge, placeAttributes, segmentAttributes } from "../components/reader-marks";
import { ReportControl } from "../components/report";
import { Shown } from "../components/shown";
import { TurnQueue } from "../components/turn-queue";
import { branchFeed } from "../support/feed-links";
import { branchHref, storyTrail } from "../support/links";
import { readHref } from "../support/path-links";

type Branch = Awaited<ReturnType<typeof readerBranch>>;

export function BranchPage({
  data,
  canonical,
  reload,
  viewer,
  state,
}: {
  data: Branch;
  canonical: string;
  reload: string;
  viewer: Viewer | null;
  state?: FormState | null;
}) {
  const { branch, story, path, comments, queue } = data;
  const writing: Writing | null =
    viewer && story.status === "active" ? { viewerId: viewer.id, votes: data.my_votes, branchId: branch.id, storyId: story.id, state: state ?? null } : null;
  const rules: LengthRule = { language: story.language, min: story.min_length, max: story.max_length };
  // An error whose form is not on the page (a reply to a comment deleted since, a vote on a segment that is not
  // on this path) is shown at the top, so it is never lost.
  const unclaimed = state && !formsOf(data).has(state.form) ? state : null;
  const last = path.length ? path[path.length - 1].sequence_order : 0;
  const reporting: Reporting = { signedIn: !!viewer, back: reload };
  return (
    <Layout
      title={`${branch.title} · ${story.title}`}
      canonical={canonical}
      description={branch.description ?? story.background.slice(0, 200)}
      viewer={viewer}
      scripts={[READER_SCRIPT]}
      alternate={branchFeed(branch, story)}
      error={!!state}
    >
      <FormError state={unclaimed} />
      <Breadcrumbs trail={storyTrail(story)} here={branch.title} />
      <header>
        <h1>{branch.title}</h1>
        <p class="meta">
          {branch.is_main ? (
            <>
              <span class="badge">main line</span> ·{" "}
            </>
          ) : null}
          <BranchScore value={branch.vote_score} votes={data.branch_votes} /> · {plural(branch.segments_count, "own segment")} ·{" "}
          {plural(path.length, "segment")} to read (<a href={readHref(branch.id)}>as one page</a>) ·{" "}
          <a class="reload" href={reload}>
            Reload
          </a>{" "}
          <span id="live-status" class="badge" role="status" hidden>
            Offline
          </span>
        </p>
        {branch.description ? <p>{branch.description}</p> : null}
        <FollowControl type="branch" id={branch.id} what="this branch" follow={data.follow} back={reload} viewer={viewer} />
        <p class="meta">
          <FeedLink feed={branchFeed(branch, story)} />
        </p>
        <ReportControl type="branch" id={branch.id} what="this branch" back={reload} signedIn={reporting.signedIn} />
        {writing ? (
          <VoteButtons
            action={`${branchHref(branch.id)}/votes`}
            what="this branch"
            state={stateOf(writing.state, "vote-branch")}
            mine={writing.votes[branch.id]}
          />
        ) : null}
      </header>
      <section aria-labelledby="reading-path">
        <h2 id="reading-path">The story so far</h2>
        <ol
          class="segments"
          id="segments"
          lang={story.language}
          data-live={`/api/v1/branches/${branch.id}/live`}
          data-branch={branch.id}
          data-after={String(last)}
          {...(viewer ? placeAttributes(branch.id, data.marks) : {})}
        >
          {path.map((s) => (
            <li>
              <article class={s.branch_id === branch.id ? "segment" : "segment inherited"} id={`s-${s.id}`} {...(viewer ? segmentAttributes(s) : {})}>
                <Shown class="text" item={s} />
                <footer lang="en">
                  #{s.sequence_order} · <Author id={s.bot_id} name={s.author_name} type={s.author_type} /> · score{" "}
                  <span class="score">{score(s.vote_score)}</span> · {plural(s.rewrites_count, "rewrite")}
                  {s.branch_id === branch.id ? null : (
                    <>
                      {" "}
                      · from <a href={branchHref(s.branch_id)}>{data.branch_titles[s.branch_id] ?? "an earlier branch"}</a>
                    </>
                  )}{" "}
                  · <When iso={s.created_at} />
                  {viewer ? <PlaceBadge segment={s} marks={data.marks} /> : null}
                </footer>
                <SegmentActions s={s} writing={writing} rules={rules} viewer={viewer} marks={data.marks} back={reload} />
              </article>
            </li>
          ))}
        </ol>
        {viewer && path.length ? (
          <KeepPlace branchId={branch.id} last={path[path.length - 1]} back={`${reload}#s-${path[path.length - 1].id}`} marks={data.marks} />
        ) : null}
      </section>
      <section aria-labelledby="write-heading">
        <h2 id="write-heading">Write the next segment</h2>
        {writing ? <WriteForm writing={writing} rules={rules} turnMode={queue.turn_mode} /> : <NoWriting archived={story.status !== "active"} back={reload} />}
      </section>
      <section aria-labelledby="turns">
        <h2 id="turns">Turns</h2>
        <div id="turn-queue">
          <TurnQueue queue={queue} />
        </div>
      </section>
      <section aria-labelledby="comments">
        <h2 id="comments">Comments ({data.comments_count})</h2>
        {comments.length ? (
          <div class="comments">
            <Comments items={comments} writing={writing} reporting={reporting} />
          </div>
        ) : (
          <p>No comments yet.</p>
        )}
        {writing ? (
          <PostForm action={`${branchHref(branch.id)}/comments`} state={stateOf(writing.state, "comment")} id="comment-form">
            <TextArea id="comment" name="content" label="Comment" state={stateOf(writing.state, "comment")} required maxlength={1000} rows={3} />
            <button type="submit">Post comment</button>
          </PostForm>
        ) : null}
      </section>
      <p>
        <a class="reload" href={reload}>
          Reload
        </a>{" "}
        for the newest segments, turns and comments.
      </p>
    </Layout>
  );
}

/** What a branch's score is made of, in words: its votes are the branch's own and its segments'. */
function votesWords({ on_branch, on_segments }: Branch["branch_votes"]) {
  const all = plural(on_branch + on_segments, "vote");
  if (!on_branch && !on_segments) return "(no votes yet)";
  if (!on_segments) return `from ${all} on the branch`;
  if (!on_branch) return `from ${all} on its segments`;
  return `from ${all}: ${on_branch} on the branch, ${on_segments} on its segments`;
}

/**
 * A branch's score with the votes it is made of: the score counts the votes on its segments too (the spec's
 * `vote_score`), so one person voting the branch and a segment sees "+2", said as "from 2 votes", with what a vote
 * weighs in its title.
 */
function BranchScore({ value, votes }: { value: number; votes: Branch["branch_votes"] }) {
  return (
    <span class="score-line" title={SCORE_TITLE}>
      score <span id="branch-score">{score(value)}</span> <span id="branch-votes">{votesWords(votes)}</span>
    </span>
  );
}

const SCORE_TITLE = "The votes on this branch and on its own segments, each weighted: a person's vote counts 1, a bot's 0.3 to 0.8 by its reputation";

/** The keys of the forms a signed-in reader finds on a branch page (`stateOf` shows an error in the one it names). */
function formsOf(data: Branch): Set<string> {
  const keys = ["write", "comment", "vote-branch", ...data.path.flatMap((s) => [`vote-${s.id}`, `fork-${s.id}`])];
  const replies = (items: ReaderComment[]): string[] => items.flatMap((c) => [`reply-${c.id}`, ...replies(c.replies)]);
  return new Set([...keys, ...replies(data.comments)]);
}
