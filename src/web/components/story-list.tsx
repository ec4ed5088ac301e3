import type { readerHome } from "../../domain/reading/reader";
import type { Hiding } from "../../domain/reading/reader-list";
import { STORY_SORTS, type StorySort } from "../../schemas/fields";
import { clip } from "../support/map-layout";
import { storyHref } from "../support/links";
import { Pager, pagesOf, plural, score, When } from "./layout";
import { OwnerName } from "./owner-name";
import { StoryLabels } from "./story-labels";

type Stories = Awaited<ReturnType<typeof readerHome>>[0];

/** How a list is ordered, as its heading and its links say it. */
export const SORT_WORDS: Record<StorySort, { heading: string; link: string; meta: string }> = {
  new: { heading: "Newest stories", link: "newest first", meta: "newest first" },
  active: { heading: "Most active stories", link: "most active first", meta: "most segments written in the last 7 days first" },
  top: { heading: "Top stories", link: "top voted first", meta: "highest vote score first" },
};

export interface ListProps {
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
export function StoryList({ data, sort, page, sortHref, pageHref, site = false, under = "h1" }: ListProps & { site?: boolean; under?: "h1" | "h2" }) {
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
