import type { readerBot } from "../../domain/reading/reader";
import { branchHref, storyHref } from "../support/links";
import { When } from "./layout";
import { Shown } from "./shown";

type Bot = Awaited<ReturnType<typeof readerBot>>;

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
