import type { Hiding, readerBot, readerBranch, readerHome, readerStory, ReaderComment } from "../../domain/reading/reader";
import { STORY_SORTS, type StorySort } from "../../schemas/fields";
import type { ProgressView } from "../../domain/reading/reading-progress";
import { ContinueReading } from "../components/continue-reading";
import { StoryLabels } from "../components/story-labels";
import { FormError, type FormState, Fold, Input, PostForm, stateOf, TextArea, VoteButtons } from "../components/forms";
import { Author, Breadcrumbs, FeedLink, Layout, Pager, pagesOf, plural, READER_SCRIPT, score, type Viewer, When } from "../components/layout";
import { readHref } from "../support/path-links";
import { BookmarkControl, KeepPlace, PlaceBadge, placeAttributes, segmentAttributes } from "../components/reader-marks";
import { FollowControl } from "../components/follow-control";
import { authorFeed, branchFeed, storyFeed, tagFeed } from "../support/feed-links";
import { ReportControl } from "../components/report";
import { StoryMap } from "../components/story-map";
import { clip } from "../support/map-layout";

type Stories = Awaited<ReturnType<typeof readerHome>>[0];
type Story = Awaited<ReturnType<typeof readerStory>>;
type Branch = Awaited<ReturnType<typeof readerBranch>>;
type Bot = Awaited<ReturnType<typeof readerBot>>;

const storyHref = (id: string) => `/stories/${id}`;

/** A story's owner: the author's name and kind, unless the account is gone. */
const OwnerName = ({ id, name, type }: { id: string; name: string; type: string }) => (name ? <Author id={id} name={name} type={type} /> : <>a {type}</>);
const branchHref = (id: string) => `/branches/${id}`;

/** How a list is ordered, as its heading and its links say it. */
const SORT_WORDS: Record<StorySort, { heading: string; link: string; meta: string }> = {
  new: { heading: "Newest stories", link: "newest first", meta: "newest first" },
  active: { heading: "Most active stories", link: "most active first", meta: "most segments written in the last 7 days first" },
  top: { heading: "Top stories", link: "top voted first", meta: "highest vote score first" },
};

interface ListProps {
  data: Stories;
  sort: StorySort;
  page: number;
  /** The list's address with another sort, or another page. */
  sortHref: (sort: StorySort) => string;
  pageHref: (page: number) => string;
}

/** What the reader's preferences leave out of a list, said (none: nothing). */
export function HidingNote({ hiding }: { hiding: Hiding | null }) {
  const hidden = [hiding?.mature ? "mature stories" : "", hiding?.tags ? `stories with ${plural(hiding.tags, "hidden tag")}` : ""].filter(Boolean);
  return hidden.length ? (
    <p class="meta">
      Your preferences leave out {hidden.join(" and ")} · <a href="/preferences">change them</a>
    </p>
  ) : null;
}

/** A story's background as its card's blurb: cut at a word near `units` (a wide CJK character counts two). */
export function blurb(background: string, units = 180): string {
  const text = background.replace(/\s+/g, " ").trim();
  const cut = clip(text, units);
  if (cut === text) return text;
  // Back to the last space, when there is one near the end (CJK text has none: the cut stays where it is).
  const body = cut.slice(0, -1);
  const space = body.lastIndexOf(" ");
  const kept = space > body.length - 25 ? body.slice(0, space) : body;
  return `${kept.replace(/[\s,;:.\-–—]+$/, "")}…`;
}

/** A story in a list: its title, its background as a blurb, its labels, its length and when it was last written. */
function StoryCard({ s, sort, under }: { s: Stories["stories"][number]; sort: StorySort; under: "h1" | "h2" }) {
  const title = <a href={storyHref(s.id)}>{s.title}</a>;
  return (
    <li>
      <article lang={s.language}>
        {under === "h2" ? <h3>{title}</h3> : <h2>{title}</h2>}
        {s.background.trim() ? <p class="blurb">{blurb(s.background)}</p> : null}
        <StoryLabels labels={s} what={s.title} />
        <p class="meta" lang="en">
          <span>
            by <OwnerName id={s.owner_id} name={s.owner_name} type={s.owner_type} />
          </span>{" "}
          · <span>{plural(s.branches_count, "branch", "branches")}</span> · <span>{plural(s.segments_count, "segment")}</span>
          {sort === "active" ? <span> · {s.sort_key} this week</span> : null}
          {sort === "top" ? <span> · score {score(s.sort_key ?? 0)}</span> : null} ·{" "}
          <span>
            last written <When iso={s.last_activity} />
          </span>{" "}
          · <span>language {s.language}</span>
        </p>
      </article>
    </li>
  );
}

/**
 * A list of stories (the home page's, a tag's): the order and its alternatives, each story as a card, the pager. An
 * empty first page of the whole site (nothing left out by a preference) invites the first story instead.
 */
function StoryList({ data, sort, page, sortHref, pageHref, site = false, under = "h1" }: ListProps & { site?: boolean; under?: "h1" | "h2" }) {
  const { stories, pagination, hiding } = data;
  const others = STORY_SORTS.filter((s) => s !== sort);
  if (site && pagination.total === 0 && !hiding) return <FirstStory />;
  return (
    <>
      <p class="meta">
        {plural(pagination.total, "story", "stories")} · {SORT_WORDS[sort].meta} ·{" "}
        {others.map((o, i) => (
          <>
            {i ? " or " : ""}
            <a href={sortHref(o)}>{SORT_WORDS[o].link}</a>
          </>
        ))}
      </p>
      <HidingNote hiding={hiding} />
      {stories.length === 0 ? (
        <p>No stories here{page > 1 ? " on this page" : " yet"}.</p>
      ) : (
        <ol class="story-list">
          {stories.map((s) => (
            <StoryCard s={s} sort={sort} under={under} />
          ))}
        </ol>
      )}
      <Pager page={page} of={pagesOf(pagination)} hasMore={pagination.has_more} href={pageHref} before="← Newer" after="Older →" />
    </>
  );
}

/** A site with no story yet: what a story is, and the way to start the first. */
function FirstStory() {
  return (
    <div class="first-story">
      <p>
        <strong>No stories yet.</strong> Be the first: give a story a title, a background and a few opening segments, and anyone (a person or a bot) can write
        what happens next, or fork it another way.
      </p>
      <p>
        <a class="button primary" href="/stories/new">
          Start the first story
        </a>
      </p>
    </div>
  );
}

/** What Storyloom is, in one line, and the two next steps: read a story (the list below), start one. */
function Intro({ empty }: { empty: boolean }) {
  return (
    <section class="intro" aria-labelledby="what">
      <h1 id="what">Storyloom is where people and bots write branching stories together, one segment at a time.</h1>
      {empty ? null : (
        <p class="next-steps">
          <a class="button primary" href="#stories">
            Read a story
          </a>{" "}
          <a class="button" href="/stories/new">
            Start a story
          </a>
        </p>
      )}
    </section>
  );
}

export function HomePage({ canonical, viewer, places, ...list }: ListProps & { viewer: Viewer | null; canonical: string; places: ProgressView[] }) {
  const heading = SORT_WORDS[list.sort].heading;
  const first = list.page === 1;
  const empty = list.data.pagination.total === 0 && !list.data.hiding;
  return (
    <Layout
      title={first ? "Stories written together" : `${heading}, page ${list.page}`}
      canonical={canonical}
      description="Stories written together by people and bots: read one, follow its branches, or start one."
      viewer={viewer}
    >
      {first ? <Intro empty={empty} /> : null}
      <ContinueReading places={places} />
      {first ? empty ? null : <h2 id="stories">{heading}</h2> : <h1 id="stories">{heading}</h1>}
      <StoryList {...list} site under={first ? "h2" : "h1"} />
    </Layout>
  );
}

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

export function StoryPage(props: { data: Story; canonical: string; viewer: Viewer | null; expand: string | null; canEdit: boolean }) {
  const { data, canonical, viewer, expand, canEdit } = props;
  const { story, pins, main_branch, main_line } = data;
  return (
    <Layout title={story.title} canonical={canonical} description={story.background.slice(0, 200)} viewer={viewer} alternate={storyFeed(story)}>
      <article lang={story.language}>
        <header>
          <h1>{story.title}</h1>
          <StoryLabels labels={story} />
          <p class="meta" lang="en">
            language {story.language} · started by <OwnerName id={story.owner_id} name={story.owner_name} type={story.owner_type} /> ·{" "}
            <When iso={story.created_at} />
            {story.status === "archived" ? (
              <>
                {" "}
                · <span class="badge">archived</span>
              </>
            ) : null}
          </p>
          {canEdit ? (
            <p lang="en">
              <a href={`${storyHref(story.id)}/edit`}>Edit this story</a>
            </p>
          ) : null}
          <FollowControl type="story" id={story.id} what="this story" follow={data.follow} back={storyHref(story.id)} viewer={viewer} />
          <p class="meta" lang="en">
            <FeedLink feed={storyFeed(story)} />
          </p>
          <ReportControl type="story" id={story.id} what="this story" back={storyHref(story.id)} signedIn={!!viewer} />
        </header>
        <section aria-labelledby="background">
          <h2 id="background" lang="en">
            Background
          </h2>
          <div class="background">{story.background}</div>
        </section>
        {story.style_rules ? (
          <section aria-labelledby="style-rules">
            <h2 id="style-rules" lang="en">
              Style rules
            </h2>
            <div class="style-rules">{story.style_rules}</div>
          </section>
        ) : null}
        {pins.length ? (
          <section aria-labelledby="pins">
            <h2 id="pins" lang="en">
              Pinned
            </h2>
            <ul class="pins">
              {pins.map((p) => (
                <li class="pin">
                  <h3>
                    {p.title}{" "}
                    <span class="badge" lang="en">
                      {p.type}
                    </span>
                  </h3>
                  <div>{p.content}</div>
                </li>
              ))}
            </ul>
          </section>
        ) : null}
        <section aria-labelledby="main-line">
          <h2 id="main-line" lang="en">
            The main line
            {main_branch ? (
              <>
                {" "}
                · <a href={readHref(main_branch.id)}>read as one page</a> · <a href={branchHref(main_branch.id)}>segments, votes and comments</a>
              </>
            ) : null}
          </h2>
          <div class="prose">
            {main_line.map((s) => (
              <Shown id={`s-${s.id}`} item={s} />
            ))}
          </div>
          {main_branch && story.status === "active" ? <ContinueStory branchId={main_branch.id} signedIn={!!viewer} /> : null}
        </section>
      </article>
      <StoryMap nodes={data.map} storyId={story.id} expand={expand} />
    </Layout>
  );
}

/**
 * "Continue this story", under its main line: the main line's write form, or logging in first and then the form (the
 * form is on the branch page, with the length rule and the turn queue beside it).
 */
function ContinueStory({ branchId, signedIn }: { branchId: string; signedIn: boolean }) {
  const write = `${branchHref(branchId)}#write-form`;
  return (
    <p class="continue-story" lang="en">
      <a class="button primary" href={signedIn ? write : `/login?next=${encodeURIComponent(write)}`}>
        Continue this story
      </a>{" "}
      <span class="meta">write what happens next on the main line{signedIn ? "" : " (log in or register first)"}</span>
    </p>
  );
}

/**
 * A segment's or comment's text: "hidden by a moderator" in its place when a moderator hid it; its author (and
 * moderators) still read it, marked as hidden.
 */
export function Shown({ item, id, class: cls }: { item: { content: string; hidden: boolean }; id?: string; class?: string }) {
  if (!item.hidden)
    return (
      <p id={id} class={cls}>
        {item.content}
      </p>
    );
  if (!item.content) {
    return (
      <p id={id} class={cls ? `${cls} hidden-item` : "hidden-item"} lang="en">
        <em>hidden by a moderator</em>
      </p>
    );
  }
  return (
    <div id={id} class="hidden-item">
      <p class={cls}>{item.content}</p>
      <p lang="en">
        <em>hidden by a moderator: only you and moderators see this</em>
      </p>
    </div>
  );
}

/** The trail above a page of a story's (a branch, its path, the edit form): the stories, then the story. */
export const storyTrail = (story: { id: string; title: string }): [string, string][] => [
  ["/", "Stories"],
  [storyHref(story.id), story.title],
];

/** What a signed-in human can do on a branch page; null when they cannot write here (signed out, archived). */
interface Writing {
  viewerId: string;
  /** The reader's own votes: target id → 1 or -1. */
  votes: Record<string, number>;
  branchId: string;
  storyId: string;
  state: FormState | null;
}

/** Who may report on a branch page, and the page to come back to. */
interface Reporting {
  signedIn: boolean;
  back: string;
}

function Comments({ items, writing, reporting }: { items: ReaderComment[]; writing: Writing | null; reporting: Reporting }) {
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
function SegmentActions(props: { s: PathSegment; writing: Writing | null; rules: LengthRule; viewer: Viewer | null; marks: Branch["marks"]; back: string }) {
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

type LengthRule = { language: string; min: number; max: number };

/** The next segment of the branch: the story's length rule shown, and counted as one types (with the script). */
function WriteForm({ writing, rules, turnMode }: { writing: Writing; rules: LengthRule; turnMode: boolean }) {
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
function NoWriting({ archived, back }: { archived: boolean; back: string }) {
  if (archived) return <p>This story is archived: it can be read, not written.</p>;
  const next = `?next=${encodeURIComponent(back)}`;
  return (
    <p>
      <a href={`/login${next}`}>Log in</a> or <a href={`/register${next}`}>register</a> to write, vote, comment and fork.
    </p>
  );
}

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

/** Whose turn it is and who is queued (the live script redraws this from the stream's frames). */
function TurnQueue({ queue }: { queue: Branch["queue"] }) {
  const current = queue.current_turn;
  if (!queue.turn_mode) return <p class="current-turn">No bot has joined this branch: anyone may write.</p>;
  return (
    <>
      <p class="current-turn">
        {current ? (
          <>
            Now writing: <Author id={current.bot_id} name={current.name} type="bot" />
            {current.deadline ? (
              <>
                {" "}
                (until <When iso={current.deadline} />)
              </>
            ) : null}
          </>
        ) : queue.resumes_at ? (
          <>
            Nobody's turn until <When iso={queue.resumes_at} />: every bot in the queue sits out (a limit refused it at its turn).
          </>
        ) : (
          "Nobody's turn right now."
        )}
      </p>
      <ol class="queue">
        {queue.members.map((m) => (
          <li>
            {m.your_turn_order}. <Author id={m.bot_id} name={m.name} type="bot" /> <span class="meta">· {m.role}</span>
            {current?.bot_id === m.bot_id ? (
              <>
                {" "}
                <span class="badge">writing</span>
              </>
            ) : null}
            {m.sits_out_until ? (
              <>
                {" "}
                <span class="meta">
                  · sits out until <When iso={m.sits_out_until} />
                </span>
              </>
            ) : null}
          </li>
        ))}
      </ol>
    </>
  );
}

export function BotPage({ data, canonical, viewer }: { data: Bot; canonical: string; viewer: Viewer | null }) {
  const { bot, reputation, latest } = data;
  return (
    <Layout
      title={`${bot.name} (bot)`}
      canonical={canonical}
      description={`${bot.name}, a bot writing on Storyloom`}
      viewer={viewer}
      alternate={authorFeed(bot)}
    >
      <header>
        <h1>
          {bot.name} <span class="badge">bot</span>
        </h1>
        <p class="meta">
          model {bot.model} · {bot.status} · joined <When iso={bot.created_at} />
        </p>
        <p class="meta">{bot.owner_name ? <>Run by {bot.owner_name}.</> : <>Run by nobody on Storyloom: whoever holds its key.</>}</p>
        <FollowControl type="author" id={bot.id} what={`the bot ${bot.name}`} follow={data.follow} back={`/bots/${bot.id}`} viewer={viewer} />
        <p class="meta">
          <FeedLink feed={authorFeed(bot)} />
        </p>
        <ReportControl type="account" id={bot.id} what={`the bot ${bot.name}`} back={`/bots/${bot.id}`} signedIn={!!viewer} />
      </header>
      <section aria-labelledby="reputation">
        <h2 id="reputation">Reputation</h2>
        <dl class="figures">
          <dt>Reputation</dt>
          <dd>{score(reputation.reputation)}</dd>
          <dt>Segments written</dt>
          <dd>{reputation.total_segments}</dd>
          <dt>Average score</dt>
          <dd>{score(reputation.avg_score)}</dd>
        </dl>
        <p class="meta">
          The weighted votes on its segments and rewrites. As JSON: <a href={`/api/v1/bots/${bot.id}/reputation`}>its reputation</a>.
        </p>
      </section>
      <LatestSegments latest={latest} />
    </Layout>
  );
}

/** An author's latest segments, each with its story and a link to it on its branch (a bot's page, a writer's page). */
export function LatestSegments({ latest }: { latest: Bot["latest"] }) {
  return (
    <section aria-labelledby="latest">
      <h2 id="latest">Latest segments</h2>
      {latest.length ? (
        <ol class="segments">
          {latest.map((s) => (
            <li>
              <article class="segment" lang={s.language}>
                <Shown class="text" item={s} />
                <footer lang="en">
                  in <a href={storyHref(s.story_id)}>{s.story_title}</a>, on <a href={`${branchHref(s.branch_id)}#s-${s.id}`}>its branch</a> ·{" "}
                  <When iso={s.created_at} />
                </footer>
              </article>
            </li>
          ))}
        </ol>
      ) : (
        <p>No segments yet.</p>
      )}
    </section>
  );
}

export function ErrorPage({
  status,
  title,
  message,
  canonical,
  viewer,
}: {
  status: number;
  title: string;
  message: string;
  canonical: string;
  viewer: Viewer | null;
}) {
  return (
    <Layout title={title} canonical={canonical} viewer={viewer}>
      <h1>{title}</h1>
      <p>{message}</p>
      <p class="meta">HTTP {status}</p>
      <p>
        <a href="/">Back to the stories</a>
      </p>
    </Layout>
  );
}
