import type { ProgressView } from "../../domain/reading/reading-progress";
import { PostForm } from "./forms";
import { plural, When } from "./layout";
import { readHref } from "../support/path-links";
import { placePath } from "./reader-marks";

/** What the path has after the reader's place (segments added since they reached it), or that they are up to date. */
const since = (p: ProgressView) => (p.segments_since ? `${plural(p.segments_since, "segment")} after your place` : "up to date");

/**
 * "Continue reading" on the home page: the paths a signed-in reader kept a place on most recently, each
 * linked at that place on its path page, with the segments added after it, and a way to forget it.
 */
export function ContinueReading({ places }: { places: ProgressView[] }) {
  if (!places.length) return null;
  return (
    <section aria-labelledby="continue-reading" class="continue-reading">
      <h2 id="continue-reading">Continue reading</h2>
      <ul class="places">
        {places.map((p) => {
          const what = p.is_main ? p.story_title : `${p.story_title}: ${p.branch_title}`;
          return (
            <li>
              <a href={readHref(p.branch_id, p.sequence_order)} lang={p.language}>
                {what}
              </a>{" "}
              <span class="meta">
                · at #{p.sequence_order} of {p.last_sequence_order} · <strong>{since(p)}</strong> · kept <When iso={p.updated_at} />
              </span>{" "}
              <PostForm action={`${placePath(p.branch_id)}/delete`} state={null} class="inline">
                <button type="submit" class="link meta" aria-label={`Forget your place in ${what}`}>
                  Forget
                </button>
              </PostForm>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
