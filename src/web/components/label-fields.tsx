import { CONTENT_WARNINGS, RATINGS } from "../../config";
import { TAGS_PER_STORY } from "../../lib/tag-rule";
import { warningField } from "../support/label-form";
import { type FormState, Input } from "./forms";
import { WARNING_WORDS } from "../../domain/discovery/label-words";

/**
 * What a story is, in the new-story and edit forms: its tags (one field, separated by commas; the reader's
 * script suggests existing tags from `GET /api/v1/tags`), its rating and its warnings (a checkbox each).
 */

/** A field of tags separated by commas, the one being typed suggested from the existing tags (the reader's script). */
export function TagsInput({ id, label, state, max }: { id: string; label: string; state: FormState | null; max: number }) {
  return (
    <>
      <Input
        id={id}
        name={id}
        label={label}
        state={state}
        maxlength={60 * max}
        autocomplete="off"
        list={`${id}-suggestions`}
        data-suggest="/api/v1/tags"
        hint={`Up to ${max}, separated by commas${id === "tags" ? ", such as: mystery, lighthouse, slow burn" : ""}.`}
      />
      <datalist id={`${id}-suggestions`} />
    </>
  );
}

export function LabelFields({ state }: { state: FormState | null }) {
  const rating = state?.values.rating ?? "general";
  return (
    <>
      <TagsInput id="tags" label="Tags" state={state} max={TAGS_PER_STORY} />
      <p class="field">
        <label for="rating">Rating</label>
        <select id="rating" name="rating" aria-describedby="rating-hint">
          {RATINGS.map((r) => (
            <option value={r} selected={r === rating ? true : undefined}>
              {r[0].toUpperCase() + r.slice(1)}
            </option>
          ))}
        </select>
        <small class="hint" id="rating-hint">
          General: for everyone. Teen: some strong content. Mature: for adults; readers may hide mature stories.
        </small>
      </p>
      <fieldset class="field checkboxes">
        <legend>Content warnings</legend>
        {CONTENT_WARNINGS.map((w) => (
          <label>
            <input type="checkbox" name={warningField(w)} checked={state?.values[warningField(w)] ? true : undefined} /> {WARNING_WORDS[w]}
          </label>
        ))}
      </fieldset>
    </>
  );
}
