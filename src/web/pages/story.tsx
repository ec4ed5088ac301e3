import type { readerStory } from "../../domain/reading/reader";
import { FollowControl } from "../components/follow-control";
import { FeedLink, Layout, type Viewer, When } from "../components/layout";
import { OwnerName } from "../components/owner-name";
import { ReportControl } from "../components/report";
import { Shown } from "../components/shown";
import { StoryLabels } from "../components/story-labels";
import { StoryMap } from "../components/story-map";
import { storyFeed } from "../support/feed-links";
import { branchHref, storyHref } from "../support/links";
import { readHref } from "../support/path-links";

type Story = Awaited<ReturnType<typeof readerStory>>;

export function StoryPage(props: { data: Story; canonical: string; viewer: Viewer | null; expand: string | null; canEdit: boolean }) {
  const { data, canonical, viewer, expand, canEdit } = props;
  const { story, pins, main_branch, main_line } = data;
  return (
    <Layout title={story.title} canonical={canonical} description={story.background.slice(0, 200)} viewer={viewer} alternate={storyFeed(story)}>
      <article lang={story.language}>
        <header>
          <h1>{story.title}</h1>
          <StoryLabels labels={story} />
          <p class="meta" lang="en">
            language {story.language} · started by <OwnerName id={story.owner_id} name={story.owner_name} type={story.owner_type} /> ·{" "}
            <When iso={story.created_at} />
            {story.status === "archived" ? (
              <>
                {" "}
                · <span class="badge">archived</span>
              </>
            ) : null}
          </p>
          {canEdit ? (
            <p lang="en">
              <a href={`${storyHref(story.id)}/edit`}>Edit this story</a>
            </p>
          ) : null}
          <FollowControl type="story" id={story.id} what="this story" follow={data.follow} back={storyHref(story.id)} viewer={viewer} />
          <p class="meta" lang="en">
            <FeedLink feed={storyFeed(story)} />
          </p>
          <ReportControl type="story" id={story.id} what="this story" back={storyHref(story.id)} signedIn={!!viewer} />
        </header>
        <section aria-labelledby="background">
          <h2 id="background" lang="en">
            Background
          </h2>
          <div class="background">{story.background}</div>
        </section>
        {story.style_rules ? (
          <section aria-labelledby="style-rules">
            <h2 id="style-rules" lang="en">
              Style rules
            </h2>
            <div class="style-rules">{story.style_rules}</div>
          </section>
        ) : null}
        {pins.length ? (
          <section aria-labelledby="pins">
            <h2 id="pins" lang="en">
              Pinned
            </h2>
            <ul class="pins">
              {pins.map((p) => (
                <li class="pin">
                  <h3>
                    {p.title}{" "}
                    <span class="badge" lang="en">
                      {p.type}
                    </span>
                  </h3>
                  <div>{p.content}</div>
                </li>
              ))}
            </ul>
          </section>
        ) : null}
        <section aria-labelledby="main-line">
          <h2 id="main-line" lang="en">
            The main line
            {main_branch ? (
              <>
                {" "}
                · <a href={readHref(main_branch.id)}>read as one page</a> · <a href={branchHref(main_branch.id)}>segments, votes and comments</a>
              </>
            ) : null}
          </h2>
          <div class="prose">
            {main_line.map((s) => (
              <Shown id={`s-${s.id}`} item={s} />
            ))}
          </div>
          {main_branch && story.status === "active" ? <ContinueStory branchId={main_branch.id} signedIn={!!viewer} /> : null}
        </section>
      </article>
      <StoryMap nodes={data.map} storyId={story.id} expand={expand} />
    </Layout>
  );
}

/**
 * "Continue this story", under its main line: the main line's write form, or logging in first and then the form (the
 * form is on the branch page, with the length rule and the turn queue beside it).
 */
function ContinueStory({ branchId, signedIn }: { branchId: string; signedIn: boolean }) {
  const write = `${branchHref(branchId)}#write-form`;
  return (
    <p class="continue-story" lang="en">
      <a class="button primary" href={signedIn ? write : `/login?next=${encodeURIComponent(write)}`}>
        Continue this story
      </a>{" "}
      <span class="meta">write what happens next on the main line{signedIn ? "" : " (log in or register first)"}</span>
    </p>
  );
}
