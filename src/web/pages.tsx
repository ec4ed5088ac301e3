import type { readerBot, readerBranch, readerStories, readerStory, ReaderBranchNode, ReaderComment } from "../domain/reader";
import { Author, Layout, plural, score, When } from "./layout";

type Stories = Awaited<ReturnType<typeof readerStories>>;
type Story = Awaited<ReturnType<typeof readerStory>>;
type Branch = Awaited<ReturnType<typeof readerBranch>>;
type Bot = Awaited<ReturnType<typeof readerBot>>;

const storyHref = (id: string) => `/stories/${id}`;
const branchHref = (id: string) => `/branches/${id}`;

export function HomePage({
  data,
  sort,
  page,
  canonical,
  pageHref,
}: {
  data: Stories;
  sort: "newest" | "active";
  page: number;
  canonical: string;
  pageHref: (page: number) => string;
}) {
  const { stories, pagination } = data;
  const pages = Math.max(1, Math.ceil(pagination.total / pagination.limit));
  const heading = sort === "active" ? "Most active stories" : "Newest stories";
  return (
    <Layout title={page > 1 ? `${heading}, page ${page}` : heading} canonical={canonical} description="Stories written together by humans and bots.">
      <h1>{heading}</h1>
      <p class="meta">
        {plural(pagination.total, "story", "stories")}
        {sort === "active" ? " · most segments written in the last 7 days first" : " · newest first"} ·{" "}
        {sort === "active" ? <a href="/">newest first</a> : <a href="/?sort=active">most active first</a>}
      </p>
      {stories.length === 0 ? (
        <p>No stories here{page > 1 ? " on this page" : " yet"}.</p>
      ) : (
        <ol class="story-list">
          {stories.map((s) => (
            <li>
              <article lang={s.language}>
                <h2>
                  <a href={storyHref(s.id)}>{s.title}</a>
                </h2>
                <p class="meta" lang="en">
                  <span>language {s.language}</span> · <span>by a {s.owner_type}</span> · <span>{plural(s.branches_count, "branch", "branches")}</span> ·{" "}
                  <span>{plural(s.segments_count, "segment")}</span>
                  {sort === "active" ? <span> · {s.recent_segments} this week</span> : null} · <When iso={s.created_at} />
                </p>
              </article>
            </li>
          ))}
        </ol>
      )}
      <nav class="pager" aria-label="Pages">
        <span>
          Page {page} of {pages}
        </span>
        <ul>
          {page > 1 ? (
            <li>
              <a rel="prev" href={pageHref(page - 1)}>
                ← Newer
              </a>
            </li>
          ) : null}
          {pagination.has_more ? (
            <li>
              <a rel="next" href={pageHref(page + 1)}>
                Older →
              </a>
            </li>
          ) : null}
        </ul>
      </nav>
    </Layout>
  );
}

function Tree({ nodes }: { nodes: ReaderBranchNode[] }) {
  return (
    <ul>
      {nodes.map((n) => (
        <li>
          <a href={branchHref(n.id)}>{n.title}</a> {n.is_main ? <span class="badge">main line</span> : null}{" "}
          <span class="meta">
            · score {score(n.vote_score)} · {plural(n.segments_count, "segment")}
          </span>
          {n.children.length ? <Tree nodes={n.children} /> : null}
        </li>
      ))}
    </ul>
  );
}

export function StoryPage({ data, canonical }: { data: Story; canonical: string }) {
  const { story, pins, main_branch, main_line, tree } = data;
  return (
    <Layout title={story.title} canonical={canonical} description={story.background.slice(0, 200)}>
      <article lang={story.language}>
        <header>
          <h1>{story.title}</h1>
          <p class="meta" lang="en">
            language {story.language} · started by a {story.owner_type} · <When iso={story.created_at} />
            {story.status === "archived" ? (
              <>
                {" "}
                · <span class="badge">archived</span>
              </>
            ) : null}
          </p>
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
                · <a href={branchHref(main_branch.id)}>segments, votes and comments</a>
              </>
            ) : null}
          </h2>
          <div class="prose">
            {main_line.map((s) => (
              <p id={`s-${s.id}`}>{s.content}</p>
            ))}
          </div>
        </section>
      </article>
      <section aria-labelledby="branches">
        <h2 id="branches">Branches ({data.branches_count})</h2>
        <nav class="tree" aria-label="Branch tree">
          <Tree nodes={tree} />
        </nav>
      </section>
    </Layout>
  );
}

function Comments({ items }: { items: ReaderComment[] }) {
  return (
    <ul>
      {items.map((c) => (
        <li>
          <article class="comment" id={`c-${c.id}`}>
            <footer>
              <Author id={c.author_id} name={c.author_name} type={c.author_type} /> · <When iso={c.created_at} />
            </footer>
            <p>{c.content}</p>
          </article>
          {c.replies.length ? <Comments items={c.replies} /> : null}
        </li>
      ))}
    </ul>
  );
}

export function BranchPage({ data, canonical, reload }: { data: Branch; canonical: string; reload: string }) {
  const { branch, story, path, comments, queue } = data;
  const current = queue.current_turn;
  return (
    <Layout title={`${branch.title} · ${story.title}`} canonical={canonical} description={branch.description ?? story.background.slice(0, 200)}>
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <ol>
          <li>
            <a href="/">Stories</a>
          </li>
          <li>
            <a href={storyHref(story.id)}>{story.title}</a>
          </li>
          <li aria-current="page">{branch.title}</li>
        </ol>
      </nav>
      <header>
        <h1>{branch.title}</h1>
        <p class="meta">
          {branch.is_main ? (
            <>
              <span class="badge">main line</span> ·{" "}
            </>
          ) : null}
          score {score(branch.vote_score)} · {plural(branch.segments_count, "own segment")} · {plural(path.length, "segment")} to read ·{" "}
          <a class="reload" href={reload}>
            Reload
          </a>
        </p>
        {branch.description ? <p>{branch.description}</p> : null}
      </header>
      <section aria-labelledby="reading-path">
        <h2 id="reading-path">The story so far</h2>
        <ol class="segments" lang={story.language}>
          {path.map((s) => (
            <li>
              <article class={s.branch_id === branch.id ? "segment" : "segment inherited"} id={`s-${s.id}`}>
                <p class="text">{s.content}</p>
                <footer lang="en">
                  #{s.sequence_order} · <Author id={s.bot_id} name={s.author_name} type={s.author_type} /> · score {score(s.vote_score)} ·{" "}
                  {plural(s.rewrites_count, "rewrite")}
                  {s.branch_id === branch.id ? null : (
                    <>
                      {" "}
                      · from <a href={branchHref(s.branch_id)}>{data.branch_titles[s.branch_id] ?? "an earlier branch"}</a>
                    </>
                  )}{" "}
                  · <When iso={s.created_at} />
                </footer>
              </article>
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="turns">
        <h2 id="turns">Turns</h2>
        {queue.turn_mode ? (
          <>
            <p class="current-turn">
              {current ? (
                <>
                  Now writing: <Author id={current.bot_id} name={current.name} type="bot" />
                  {current.deadline ? (
                    <>
                      {" "}
                      (until <When iso={current.deadline} />)
                    </>
                  ) : null}
                </>
              ) : (
                "Nobody's turn right now."
              )}
            </p>
            <ol class="queue">
              {queue.members.map((m) => (
                <li>
                  {m.your_turn_order}. <Author id={m.bot_id} name={m.name} type="bot" /> <span class="meta">· {m.role}</span>
                  {current?.bot_id === m.bot_id ? (
                    <>
                      {" "}
                      <span class="badge">writing</span>
                    </>
                  ) : null}
                </li>
              ))}
            </ol>
          </>
        ) : (
          <p>No bot has joined this branch: anyone may write.</p>
        )}
      </section>
      <section aria-labelledby="comments">
        <h2 id="comments">Comments ({data.comments_count})</h2>
        {comments.length ? (
          <div class="comments">
            <Comments items={comments} />
          </div>
        ) : (
          <p>No comments yet.</p>
        )}
      </section>
      <p>
        <a class="reload" href={reload}>
          Reload
        </a>{" "}
        for the newest segments, turns and comments.
      </p>
    </Layout>
  );
}

export function BotPage({ data, canonical }: { data: Bot; canonical: string }) {
  const { bot, reputation, latest } = data;
  return (
    <Layout title={`${bot.name} (bot)`} canonical={canonical} description={`${bot.name}, a bot writing on Storyloom`}>
      <header>
        <h1>
          {bot.name} <span class="badge">bot</span>
        </h1>
        <p class="meta">
          model {bot.model} · {bot.status} · joined <When iso={bot.created_at} />
        </p>
      </header>
      <section aria-labelledby="reputation">
        <h2 id="reputation">Reputation</h2>
        <dl class="figures">
          <dt>Reputation</dt>
          <dd>{score(reputation.reputation)}</dd>
          <dt>Segments written</dt>
          <dd>{reputation.total_segments}</dd>
          <dt>Average score</dt>
          <dd>{score(reputation.avg_score)}</dd>
        </dl>
        <p class="meta">
          The weighted votes on its segments and rewrites. As JSON: <a href={`/api/v1/bots/${bot.id}/reputation`}>its reputation</a>.
        </p>
      </section>
      <section aria-labelledby="latest">
        <h2 id="latest">Latest segments</h2>
        {latest.length ? (
          <ol class="segments">
            {latest.map((s) => (
              <li>
                <article class="segment" lang={s.language}>
                  <p class="text">{s.content}</p>
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
    </Layout>
  );
}

export function ErrorPage({ status, title, message, canonical }: { status: number; title: string; message: string; canonical: string }) {
  return (
    <Layout title={title} canonical={canonical}>
      <h1>{title}</h1>
      <p>{message}</p>
      <p class="meta">HTTP {status}</p>
      <p>
        <a href="/">Back to the stories</a>
      </p>
    </Layout>
  );
}
