import { type FormState, Input, PostForm, TextArea } from "../components/forms";
import { LabelFields } from "../components/label-fields";
import { Layout, READER_SCRIPT, type Viewer } from "../components/layout";
import { lengthUnit } from "../../lib/length-rule";
import { FORM_LENGTH_DEFAULTS, INITIAL_SEGMENT_FIELDS, formDefaultsFor } from "../support/story-form";

/** The languages the form offers (the API takes any language code). */
const LANGUAGES: [code: string, name: string][] = [
  ["en", "English"],
  ["zh", "中文 (Chinese)"],
  ["ja", "日本語 (Japanese)"],
  ["ko", "한국어 (Korean)"],
  ["es", "Español (Spanish)"],
  ["fr", "Français (French)"],
  ["de", "Deutsch (German)"],
  ["pt-BR", "Português (Brazilian Portuguese)"],
];

/** The length rule's fields; their defaults are the form's own, by what the language counts (`FORM_LENGTH_DEFAULTS`). */
const LENGTH_FIELDS = [
  ["min_length", "Shortest segment", "min"],
  ["max_length", "Longest segment", "max"],
] as const;

/** The rule a form shows: what was typed when it is a number, else the suggestion for the language. */
const ruleValue = (typed: string | undefined, fallback: number) => (typed && Number.isInteger(Number(typed)) && Number(typed) > 0 ? Number(typed) : fallback);

/**
 * Starting a story, as a person's step: the spec's rule (an opening and 3 to 5 segments within the length rule), the
 * unit said plainly (words, or characters for zh/ja/ko), lengths suggested that a person can meet, a live count under
 * each segment (the page's script; the server checks again and names every field out of its rule at once).
 */
export function NewStoryPage({ canonical, viewer, state }: { canonical: string; viewer: Viewer; state: FormState | null }) {
  const language = state?.values.language ?? "en";
  const suggested = formDefaultsFor(language);
  const unit = lengthUnit(language);
  const rule = { language, min: ruleValue(state?.values.min_length, suggested.min), max: ruleValue(state?.values.max_length, suggested.max), fromForm: true };
  return (
    <Layout title="New story" canonical={canonical} viewer={viewer} scripts={[READER_SCRIPT]} error={!!state}>
      <h1>Start a story</h1>
      <p>A story opens with its background, an opening and 3 to 5 segments on its main line; then anyone may continue it or fork it.</p>
      <PostForm action="/stories" state={state} class="stacked" id="story-form">
        <Input id="title" name="title" label="Title" state={state} required maxlength={100} />
        <p class="field">
          <label for="language">Language</label>
          <select id="language" name="language" aria-describedby="language-hint">
            {LANGUAGES.map(([code, name]) => (
              <option value={code} selected={code === language ? true : undefined}>
                {name}
              </option>
            ))}
          </select>
          <small class="hint" id="language-hint">
            Chinese, Japanese and Korean count characters (white space not counted); other languages count words.
          </small>
        </p>
        <TextArea id="background" name="background" label="Background" state={state} required minlength={10} maxlength={5000} rows={4} />
        <TextArea id="style_rules" name="style_rules" label="Style rules" state={state} maxlength={5000} rows={3} hint="Optional." />
        <LabelFields state={state} />
        <fieldset class="length-rule" aria-describedby="length-rule-hint">
          <legend>Length of each segment</legend>
          <p class="hint" id="length-rule-hint">
            Every segment, the 3 to 5 below and each one written later, must be this long, counted in <strong data-length-unit="">{unit}</strong> for this
            story's language. The opening is not held to it.
          </p>
          <div class="pair">
            {LENGTH_FIELDS.map(([name, label, end]) => (
              <Input
                id={name}
                name={name}
                label={label}
                type="number"
                state={state}
                value={state?.values[name] ?? String(suggested[end])}
                min={1}
                max={100000}
                required
                hint={<span data-length-unit="">{unit}</span>}
                data-default-words={String(FORM_LENGTH_DEFAULTS.words[end])}
                data-default-characters={String(FORM_LENGTH_DEFAULTS.characters[end])}
              />
            ))}
          </div>
        </fieldset>
        <TextArea id="starter" name="starter" label="Opening" state={state} required rows={4} hint="The starter: how the story begins." />
        {INITIAL_SEGMENT_FIELDS.map((f) => (
          <TextArea
            id={f.name}
            name={f.name}
            label={f.label}
            state={state}
            length={rule}
            required={f.required ? true : undefined}
            rows={4}
            hint={f.required ? undefined : "Optional."}
          />
        ))}
        <button type="submit">Create story</button>
      </PostForm>
    </Layout>
  );
}
