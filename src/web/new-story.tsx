import { type FormState, Input, PostForm, TextArea } from "./forms";
import { LabelFields } from "./label-fields";
import { Layout, READER_SCRIPT, type Viewer } from "./layout";

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

/** The length rule's fields, with the API's defaults. */
const LENGTH_FIELDS = [
  ["min_length", "Minimum length", "150"],
  ["max_length", "Maximum length", "500"],
] as const;

/** Segments 1–3 are required, 4 and 5 optional (a story opens with 3 to 5). */
export const INITIAL_SEGMENT_FIELDS = [1, 2, 3, 4, 5].map((n) => ({ name: `segment_${n}`, label: `Segment ${n}`, required: n <= 3 }));

export function NewStoryPage({ canonical, viewer, state }: { canonical: string; viewer: Viewer; state: FormState | null }) {
  const language = state?.values.language ?? "en";
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
            Chinese, Japanese and Korean count characters; other languages count words.
          </small>
        </p>
        <TextArea id="background" name="background" label="Background" state={state} required minlength={10} maxlength={5000} rows={4} />
        <TextArea id="style_rules" name="style_rules" label="Style rules" state={state} maxlength={5000} rows={3} hint="Optional." />
        <LabelFields state={state} />
        <div class="pair">
          {LENGTH_FIELDS.map(([name, label, fallback]) => (
            <Input id={name} name={name} label={label} type="number" state={state} value={state?.values[name] ?? fallback} min={1} max={100000} required />
          ))}
        </div>
        <TextArea id="starter" name="starter" label="Opening" state={state} required rows={4} hint="The starter: how the story begins." />
        {INITIAL_SEGMENT_FIELDS.map((f) => (
          <TextArea
            id={f.name}
            name={f.name}
            label={f.label}
            state={state}
            length="from-form"
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
