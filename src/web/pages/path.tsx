import type { PathChoice, PathEntry, readerPath } from "../../domain/reading/path-page";
import { branchFeed } from "../support/feed-links";
import { Author, Breadcrumbs, Layout, Pager, plural, READER_SCRIPT, type Viewer } from "../components/layout";
import { Shown } from "../components/shown";
import { storyTrail } from "../support/links";
import { pathPageOf, readHref } from "../support/path-links";
import { BookmarkControl, KeepPlace, PlaceBadge, placeAttributes, segmentAttributes } from "../components/reader-marks";

type Path = Awaited<ReturnType<typeof readerPath>>;

const pageHref = (branchId: string, page: number) => (page > 1 ? `${readHref(branchId)}?page=${page}` : readHref(branchId));

/** A branch's name on the path, linked where it may be read; a hidden one unnamed. */
const Named = ({ title, href }: { title: string | null; href?: string }) =>
  title === null ? <>a hidden branch</> : href ? <a href={href}>{title}</a> : <cite>{title}</cite>;

/** Where the path leaves one branch for another: the segment it forks after, on the branch it leaves. */
function Crossing({ s }: { s: PathEntry }) {
  const c = s.crossing!;
  return (
    <p class="crossing" lang="en">
      <span aria-hidden="true">↳ </span>Here the path leaves <Named title={c.from_title} href={readHref(c.from_branch_id, s.sequence_order - 1)} /> and goes on
      with <Named title={c.title} />.
    </p>
  );
}

/** The other ways on from a segment, each opening at its first segment (or at the fork, when it has none yet). */
function Choices({ s }: { s: PathEntry }) {
  const at = (c: PathChoice) => (c.segments_count ? c.fork_sequence + 1 : c.fork_sequence);
  return (
    <div class="choices" lang="en">
      <p>Other ways on from #{s.sequence_order}:</p>
      <ul>
        {s.choices.map((c) => (
          <li>
            continue on{" "}
            <a href={readHref(c.id, at(c))}>
              <cite>{c.title}</cite>
            </a>{" "}
            · {plural(c.segments_count, "segment")}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * A branch's reading path as one page: its ancestors up to each fork, then its own segments, 50 a page,
 * each with an anchor (`#s-<sequence_order>`) so a link reopens at it; a mark where the path crosses a fork, and
 * under each segment the branches forking from it, as a choose-your-path book has them. A signed-in reader also gets
 * a Bookmark button under each segment and their place kept: as they read, with the script, or with
 * "Keep my place" at the page's end.
 */
export function PathPage({ data, canonical, viewer }: { data: Path; canonical: string; viewer: Viewer | null }) {
  const { branch, story, page, pages, segments, marks } = data;
  const onPage = pages > 1 ? `, page ${page} of ${pages}` : "";
  const place = viewer ? marks.place : null;
  const last = segments.at(-1);
  return (
    <Layout
      title={`${branch.title}${onPage} · ${story.title}`}
      canonical={canonical}
      description={branch.description ?? `${branch.title}, read as one page`}
      viewer={viewer}
      scripts={viewer ? [READER_SCRIPT] : []}
      alternate={branchFeed(branch, story)}
    >
      <Breadcrumbs trail={storyTrail(story)} here={branch.title} />
      <header>
        <h1>{branch.title}</h1>
        <p class="meta">
          The whole path as one page: {plural(data.length, "segment")}
          {onPage} · <a href={`/branches/${branch.id}`}>votes, comments and writing</a> · <a href={`/stories/${story.id}#map`}>the story's map</a>
          {place && pathPageOf(place.sequence_order) !== page ? (
            <>
              {" "}
              · <a href={readHref(branch.id, place.sequence_order)}>your place, #{place.sequence_order}</a>
            </>
          ) : null}
        </p>
        <p class="meta downloads">
          Download the whole path:{" "}
          <a href={`/branches/${branch.id}/export.epub`} download type="application/epub+zip">
            EPUB
          </a>{" "}
          ·{" "}
          <a href={`/branches/${branch.id}/export.md`} download type="text/markdown">
            Markdown
          </a>
        </p>
      </header>
      <ol class="path" lang={story.language} {...(viewer ? placeAttributes(branch.id, marks) : {})}>
        {segments.map((s) => (
          <li id={`s-${s.sequence_order}`} class={s.crossing ? "path-segment crossed" : "path-segment"} {...(viewer ? segmentAttributes(s) : {})}>
            {s.crossing ? <Crossing s={s} /> : null}
            <Shown class="text" item={s} />
            <p class="meta" lang="en">
              <a href={`#s-${s.sequence_order}`} title="A link to this place in the story">
                #{s.sequence_order}
              </a>{" "}
              · <Author id={s.bot_id} name={s.author_name} type={s.author_type} />
            </p>
            {viewer ? (
              <div class="meta marks" lang="en">
                <BookmarkControl segment={s} back={readHref(branch.id, s.sequence_order)} marks={marks} />
                <PlaceBadge segment={s} marks={marks} />
              </div>
            ) : null}
            {s.choices.length ? <Choices s={s} /> : null}
          </li>
        ))}
      </ol>
      {viewer && last ? <KeepPlace branchId={branch.id} last={last} back={readHref(branch.id, last.sequence_order)} marks={marks} /> : null}
      {page === pages ? (
        <p class="path-end">
          {branch.segments_count === 0 && !branch.is_main ? (
            <>
              <cite>{branch.title}</cite> forks here and has no segments of its own yet.{" "}
            </>
          ) : null}
          The end of this path so far. <a href={`/branches/${branch.id}#write-heading`}>Write what happens next</a>, or fork from any segment, on the branch's
          page.
        </p>
      ) : null}
      <Pager page={page} of={pages} hasMore={page < pages} href={(n) => pageHref(branch.id, n)} before="← Earlier" after="Later →" />
    </Layout>
  );
}
