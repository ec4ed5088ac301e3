import type { readerSearch } from "../../usecases/search";
import type { SearchHit } from "../../domain/discovery/search";
import { snippetParts } from "../../lib/search-text";
import type { SearchType } from "../../schemas/search";
import { Author, Layout, Pager, pagesOf, plural, type Viewer } from "../components/layout";
import { HidingNote } from "../components/story-list";
import { StoryLabels } from "../components/story-labels";

type Found = Awaited<ReturnType<typeof readerSearch>>;

export interface SearchPageProps {
  canonical: string;
  viewer: Viewer | null;
  /** The words as typed (absent: the page before any search). */
  words?: string;
  type: SearchType;
  page: number;
  found: Found | null;
  /** Why the words cannot be searched for (a 400). */
  error?: string;
  typeHref: (type: SearchType) => string;
  pageHref: (page: number) => string;
}

const TYPE_WORDS: Record<SearchType, string> = { all: "Everything", story: "Stories", segment: "Segments" };

/** The snippet, its matches marked (each part escaped as text). */
const Snippet = ({ hit }: { hit: SearchHit }) => <p class="snippet">{snippetParts(hit).map((p) => (p.hit ? <mark>{p.text}</mark> : p.text))}</p>;

/** A story found: its title to its page, its labels, the snippet. */
const StoryHit = ({ hit }: { hit: SearchHit }) => (
  <article lang={hit.story.language}>
    <h2>
      <a href={`/stories/${hit.story.id}`}>{hit.story.title}</a>
    </h2>
    <StoryLabels labels={hit.story} what={hit.story.title} />
    <Snippet hit={hit} />
  </article>
);

/** A segment found: where it is (its place on its branch's page), who wrote it, its story, the snippet. */
function SegmentHit({ hit }: { hit: SearchHit & { type: "segment" } }) {
  const { story, branch, segment } = hit;
  return (
    <article lang={story.language}>
      <h2>
        <a href={`/branches/${branch.id}#s-${segment.id}`}>
          {branch.is_main ? story.title : `${story.title}: ${branch.title}`} #{segment.sequence_order}
        </a>
      </h2>
      <Snippet hit={hit} />
      <p class="meta" lang="en">
        segment #{segment.sequence_order} of {branch.is_main ? "the main line" : "a branch"} · by{" "}
        <Author id={segment.author_id} name={segment.author_name} type={segment.author_type} /> · in{" "}
        <a href={`/stories/${story.id}`} lang={story.language}>
          {story.title}
        </a>
      </p>
    </article>
  );
}

/** How to search, before a search (and beside a refused one). */
const HowTo = () => (
  <p class="meta">
    Type words into the search box: stories are found by their title, background and tags, segments by their text. Every word must match. English matches whole
    words (<code>bell*</code> finds words starting with bell); Chinese, Japanese and Korean match anywhere, one character or more.
  </p>
);

/** The search page: the words, what was searched, the hits with their snippets, the pager. */
export function SearchPage({ canonical, viewer, words, type, page, found, error, typeHref, pageHref }: SearchPageProps) {
  const title = words && found ? `Search: ${words}${page > 1 ? `, page ${page}` : ""}` : "Search";
  return (
    <Layout title={title} canonical={canonical} description="Search Storyloom's stories and segments." viewer={viewer} search={words} error={!!error}>
      <h1>{words && found ? `Results for “${words}”` : "Search"}</h1>
      {error ? (
        <div class="form-error" role="alert">
          <p>{error}</p>
        </div>
      ) : null}
      {found ? <Results found={found} type={type} page={page} typeHref={typeHref} pageHref={pageHref} /> : <HowTo />}
    </Layout>
  );
}

function Results({ found, type, page, typeHref, pageHref }: { found: Found } & Pick<SearchPageProps, "type" | "page" | "typeHref" | "pageHref">) {
  // Each type's count is known when everything was searched; otherwise only the one searched.
  const count = (t: SearchType) => (t === type ? found.count : type !== "all" ? null : t === "story" ? found.counts.stories : found.counts.segments);
  return (
    <>
      <nav class="filters" aria-label="What to search">
        <ul>
          {(["all", "story", "segment"] as const).map((t) => (
            <li>
              {t === type ? (
                <strong aria-current="page">
                  {TYPE_WORDS[t]} ({count(t)})
                </strong>
              ) : (
                <a href={typeHref(t)}>
                  {TYPE_WORDS[t]}
                  {count(t) === null ? "" : ` (${count(t)})`}
                </a>
              )}
            </li>
          ))}
        </ul>
      </nav>
      <p class="meta">
        {plural(found.count, "result")}
        {type === "all" ? ": stories first, then segments" : ""}, best first
      </p>
      <HidingNote hiding={found.hiding} />
      {found.results.length === 0 ? (
        <p>Nothing found{page > 1 ? " on this page" : ""}.</p>
      ) : (
        <ol class="search-results">
          {found.results.map((hit) => (
            <li>{hit.type === "segment" ? <SegmentHit hit={hit} /> : <StoryHit hit={hit} />}</li>
          ))}
        </ol>
      )}
      <Pager page={page} of={pagesOf(found.pagination)} hasMore={found.pagination.has_more} href={pageHref} />
    </>
  );
}
