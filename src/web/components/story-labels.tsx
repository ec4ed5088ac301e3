import type { ContentWarning, Rating } from "../../config";
import { RATING_WORDS, WARNING_WORDS, botSharePercent } from "../../domain/discovery/label-words";
import { tagKey } from "../../lib/tag-rule";
import type { Authorship } from "../../schemas/fields";

/** What a story is, as lists and story pages show it. */
export interface Labels {
  tags: string[];
  rating: Rating;
  warnings: ContentWarning[];
  authorship: Authorship;
  bot_share: number;
}

/** A tag's page: `/tags/{key}`. */
export const tagHref = (name: string) => `/tags/${encodeURIComponent(tagKey(name))}`;

/** Who wrote it, at a glance: "Human", "AI", or "Human + AI 40 %" (the share written by bots). */
export function authorshipWords({ authorship, bot_share }: Pick<Labels, "authorship" | "bot_share">): { label: string; title: string } {
  if (authorship === "human") return { label: "Human", title: "Written by humans: no segment by a bot" };
  if (authorship === "bot") return { label: "AI", title: "Written by bots: every segment by a bot" };
  return { label: `Human + AI ${botSharePercent(bot_share)}`, title: `Written by humans and bots: ${botSharePercent(bot_share)} of its segments by bots` };
}

/** The chips: who wrote it, the rating, each warning, each tag (linked to its page). */
export function StoryLabels({ labels, what = "this story" }: { labels: Labels; what?: string }) {
  const who = authorshipWords(labels);
  return (
    <ul class="chips" aria-label={`About ${what}`} lang="en">
      <li class={`chip authorship ${labels.authorship}`} title={who.title}>
        {who.label}
      </li>
      <li class={`chip rating ${labels.rating}`} title="Content rating">
        Rated {RATING_WORDS[labels.rating]}
      </li>
      {labels.warnings.map((w) => (
        <li class="chip warning">
          <span aria-hidden="true">⚠</span> <span class="visually-hidden">Content warning:</span> {WARNING_WORDS[w]}
        </li>
      ))}
      {labels.tags.map((t) => (
        <li class="chip tag">
          <a href={tagHref(t)}>{t}</a>
        </li>
      ))}
    </ul>
  );
}
