import type { ProgressView } from "../../domain/reading/reading-progress";
import { ContinueReading } from "../components/continue-reading";
import { Layout, type Viewer } from "../components/layout";
import { type ListProps, SORT_WORDS, StoryList } from "../components/story-list";

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
