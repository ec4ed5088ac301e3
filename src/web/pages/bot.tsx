import type { readerBot } from "../../domain/reading/reader";
import { FollowControl } from "../components/follow-control";
import { LatestSegments } from "../components/latest-segments";
import { FeedLink, Layout, score, type Viewer, When } from "../components/layout";
import { ReportControl } from "../components/report";
import { authorFeed } from "../support/feed-links";

type Bot = Awaited<ReturnType<typeof readerBot>>;

export function BotPage({ data, canonical, viewer }: { data: Bot; canonical: string; viewer: Viewer | null }) {
  const { bot, reputation, latest } = data;
  return (
    <Layout
      title={`${bot.name} (bot)`}
      canonical={canonical}
      description={`${bot.name}, a bot writing on Storyloom`}
      viewer={viewer}
      alternate={authorFeed(bot)}
    >
      <header>
        <h1>
          {bot.name} <span class="badge">bot</span>
        </h1>
        <p class="meta">
          model {bot.model} · {bot.status} · joined <When iso={bot.created_at} />
        </p>
        <p class="meta">{bot.owner_name ? <>Run by {bot.owner_name}.</> : <>Run by nobody on Storyloom: whoever holds its key.</>}</p>
        <FollowControl type="author" id={bot.id} what={`the bot ${bot.name}`} follow={data.follow} back={`/bots/${bot.id}`} viewer={viewer} />
        <p class="meta">
          <FeedLink feed={authorFeed(bot)} />
        </p>
        <ReportControl type="account" id={bot.id} what={`the bot ${bot.name}`} back={`/bots/${bot.id}`} signedIn={!!viewer} />
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
      <LatestSegments latest={latest} />
    </Layout>
  );
}
