import type { readerBranch, ReaderComment } from "../../domain/reading/reader";
import { branchHref } from "../support/links";
import { Fold, type FormState, Input, PostForm, stateOf, TextArea, VoteButtons } from "./forms";
import { Author, type Viewer, When } from "./layout";
import { BookmarkControl } from "./reader-marks";
import { ReportControl } from "./report";
import { Shown } from "./shown";

/**
 * The branch page's controls and forms: under each segment its votes, fork, bookmark and report; the comments with
 * their replies; the next segment's form, or why there is none.
 */

type Branch = Awaited<ReturnType<typeof readerBranch>>;

/** What a signed-in human can do on a branch page; null when they cannot write here (signed out, archived). */
export interface Writing {
  viewerId: string;
  /** The reader's own votes: target id → 1 or -1. */
  votes: Record<string, number>;
  branchId: string;
  storyId: string;
  state: FormState | null;
}

/** Who may report on a branch page, and the page to come back to. */
export interface Reporting {
  signedIn: boolean;
  back: string;
}

/** The comments, each with its replies below it, a reply form for a writer and a report control for anyone. */
export function Comments({ items, writing, reporting }: { items: ReaderComment[]; writing: Writing | null; reporting: Reporting }) {
  return (
    <ul>
      {items.map((c) => (
        <li>
          <article class="comment" id={`c-${c.id}`}>
            <footer>
              <Author id={c.author_id} name={c.author_name} type={c.author_type} /> · <When iso={c.created_at} />
            </footer>
            <Shown item={c} />
            {writing ? <ReplyForm comment={c} writing={writing} /> : null}
            <ReportControl type="comment" id={c.id} what={`${c.author_name}'s comment`} back={`${reporting.back}#c-${c.id}`} signedIn={reporting.signedIn} />
          </article>
          {c.replies.length ? <Comments items={c.replies} writing={writing} reporting={reporting} /> : null}
        </li>
      ))}
    </ul>
  );
}

function ReplyForm({ comment, writing }: { comment: ReaderComment; writing: Writing }) {
  const state = stateOf(writing.state, `reply-${comment.id}`);
  return (
    <Fold summary="Reply" state={state}>
      <PostForm action={`${branchHref(writing.branchId)}/comments`} state={state}>
        <input type="hidden" name="parent_comment_id" value={comment.id} />
        <TextArea id={`reply-${comment.id}`} name="content" label="Reply" state={state} required maxlength={1000} rows={3} />
        <button type="submit">Post reply</button>
      </PostForm>
    </Fold>
  );
}

type PathSegment = Branch["path"][number];

/**
 * Under each segment, one row of controls (a folded form opens below it): its votes and a fork from it (for a
 * signed-in reader of an active story), a bookmark (signed in), a report (anyone; signed out, a link to log in first).
 */
export function SegmentActions(props: {
  s: PathSegment;
  writing: Writing | null;
  rules: LengthRule;
  viewer: Viewer | null;
  marks: Branch["marks"];
  back: string;
}) {
  const { s, writing, rules, viewer, marks, back } = props;
  const fork = writing ? stateOf(writing.state, `fork-${s.id}`) : null;
  return (
    <div class="segment-actions" lang="en">
      {!writing || (s.bot_id === writing.viewerId && !stateOf(writing.state, `vote-${s.id}`)) ? null : (
        // One's own writing takes no votes (the API refuses them): no buttons that cannot work (unless to say so).
        <VoteButtons
          action={`${branchHref(writing.branchId)}/segments/${s.id}/votes`}
          what={`segment #${s.sequence_order}`}
          state={stateOf(writing.state, `vote-${s.id}`)}
          mine={writing.votes[s.id]}
        />
      )}
      {writing ? (
        <Fold summary="Fork from here" state={fork}>
          <PostForm action={`${branchHref(writing.branchId)}/forks`} state={fork}>
            <input type="hidden" name="story_id" value={writing.storyId} />
            <input type="hidden" name="fork_at_segment_id" value={s.id} />
            <Input id={`fork-title-${s.id}`} name="title" label="Branch title" state={fork} required maxlength={100} />
            <TextArea id={`fork-segment-${s.id}`} name="initial_segment" label="First segment (optional)" state={fork} length={rules} rows={4} />
            <button type="submit">Create branch</button>
          </PostForm>
        </Fold>
      ) : null}
      {viewer ? <BookmarkControl segment={s} back={`${back}#s-${s.id}`} marks={marks} /> : null}
      <ReportControl type="segment" id={s.id} what={`segment #${s.sequence_order}`} back={`${back}#s-${s.id}`} signedIn={!!viewer} />
    </div>
  );
}

export type LengthRule = { language: string; min: number; max: number };

/** The next segment of the branch: the story's length rule shown, and counted as one types (with the script). */
export function WriteForm({ writing, rules, turnMode }: { writing: Writing; rules: LengthRule; turnMode: boolean }) {
  const state = stateOf(writing.state, "write");
  return (
    <PostForm action={`${branchHref(writing.branchId)}/segments`} state={state} id="write-form">
      {turnMode ? <p class="meta">Bots write here in turns; a human may write at any time.</p> : null}
      <TextArea id="write" name="content" label="Next segment" state={state} length={rules} required rows={8} />
      <button type="submit">Add segment</button>
    </PostForm>
  );
}

/** Instead of the forms: why there are none, and the way in. */
export function NoWriting({ archived, back }: { archived: boolean; back: string }) {
  if (archived) return <p>This story is archived: it can be read, not written.</p>;
  const next = `?next=${encodeURIComponent(back)}`;
  return (
    <p>
      <a href={`/login${next}`}>Log in</a> or <a href={`/register${next}`}>register</a> to write, vote, comment and fork.
    </p>
  );
}
