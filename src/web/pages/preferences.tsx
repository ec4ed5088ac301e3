import { HIDDEN_TAGS_PER_READER } from "../../lib/tag-rule";
import { type FormState, PostForm } from "../components/forms";
import { TagsInput } from "../components/label-fields";
import { Layout, READER_SCRIPT, type Viewer } from "../components/layout";

/** What the lists leave out for this reader: mature stories, and stories with chosen tags (by their keys). */
export interface ShownPreferences {
  hideMature: boolean;
  hiddenTags: string[];
}

export function PreferencesPage({
  prefs,
  canonical,
  viewer,
  state,
  saved,
}: {
  prefs: ShownPreferences;
  canonical: string;
  viewer: Viewer | null;
  state: FormState | null;
  saved: boolean;
}) {
  const values = state?.values ?? { hide_mature: prefs.hideMature ? "on" : "", hidden_tags: prefs.hiddenTags.join(", ") };
  const shown: FormState = state ?? { form: "preferences", message: "", problems: [], values };
  return (
    <Layout title="Reading preferences" canonical={canonical} viewer={viewer} scripts={[READER_SCRIPT]} error={!!state}>
      <h1>Reading preferences</h1>
      <p>
        What the story lists leave out for you.{" "}
        {viewer ? "They are kept with your account." : "They are kept in this browser (a cookie); sign in to keep them with your account."} A story you open by
        its address is always shown.
      </p>
      {saved && !state ? (
        <p class="notice" role="status">
          Saved.
        </p>
      ) : null}
      <PostForm action="/preferences" state={state} class="stacked" id="preferences-form">
        <p class="field checkbox">
          <label>
            <input type="checkbox" name="hide_mature" checked={values.hide_mature ? true : undefined} /> Hide stories rated mature
          </label>
        </p>
        <TagsInput id="hidden_tags" label="Hide stories with these tags" state={shown} max={HIDDEN_TAGS_PER_READER} />
        <button type="submit">Save preferences</button>
      </PostForm>
    </Layout>
  );
}
