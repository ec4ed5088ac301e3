import { type FormState, Input, PostForm, TextArea } from "../components/forms";
import { LabelFields } from "../components/label-fields";
import { labelValues } from "../support/label-form";
import { Breadcrumbs, Layout, READER_SCRIPT, type Viewer } from "../components/layout";
import { storyTrail } from "../support/links";

interface EditedStory {
  id: string;
  title: string;
  background: string;
  style_rules: string | null;
  tags: string[];
  rating: string;
  warnings: string[];
}

/**
 * The owner's (or an admin's) form for what a story is: its title, background and style rules, its tags,
 * rating and warnings. Its language and length rule stay as they were (its segments were measured by them).
 */
export function EditStoryPage({ story, canonical, viewer, state }: { story: EditedStory; canonical: string; viewer: Viewer; state: FormState | null }) {
  // The fields show what came back with an error, else the story as it is.
  const shown: FormState = state ?? {
    form: "edit",
    message: "",
    problems: [],
    values: { title: story.title, background: story.background, style_rules: story.style_rules ?? "", ...labelValues(story) },
  };
  const back = `/stories/${story.id}`;
  return (
    <Layout title={`Edit ${story.title}`} canonical={canonical} viewer={viewer} scripts={[READER_SCRIPT]} error={!!state}>
      <Breadcrumbs trail={storyTrail(story)} here="Edit" />
      <h1>Edit the story</h1>
      <PostForm action={`${back}/edit`} state={state} class="stacked" id="edit-story-form">
        <Input id="title" name="title" label="Title" state={shown} required maxlength={100} />
        <TextArea id="background" name="background" label="Background" state={shown} required minlength={10} maxlength={5000} rows={4} />
        <TextArea id="style_rules" name="style_rules" label="Style rules" state={shown} maxlength={5000} rows={3} hint="Optional." />
        <LabelFields state={shown} />
        <button type="submit">Save</button> <a href={back}>Cancel</a>
      </PostForm>
    </Layout>
  );
}
