import { type Db, getDb } from "../db/client";
import { nextToMoveQuery } from "../domain/discovery/search-move";
import { type SearchMessage, searchShardsOf } from "../durable/search-shards";
import type { Env } from "../env";
import { moveSteps, syncStory } from "../usecases/search";
import { backoffSeconds } from "./webhooks";

export const SEARCH_QUEUE = "search-sync";

/**
 * A move message's time: it moves stories for this long (each step a story's copy and one batch), and queues no other;
 * the sweeper queues one a minute while the move goes on, so moves never pile up behind each other.
 */
const MOVE_MS = 20_000;
const MOVE_STEPS_MAX = 10_000;

/**
 * The search queue's consumer: each story named in the batch is synced once (a burst of segments on one story
 * is one sync), and a move message moves the next stories for a while (the sweeper queues the next). A failed sync
 * is retried by the queue; one the queue gives up on is the sweeper's (the story is still behind in D1).
 */
export async function handleSearch(batch: MessageBatch<SearchMessage>, env: Env): Promise<void> {
  const db = getDb(env.DB);
  const shards = searchShardsOf(env);
  const byStory = new Map<string, Message<SearchMessage>[]>();
  const moves: Message<SearchMessage>[] = [];
  for (const m of batch.messages) {
    if ("storyId" in m.body) byStory.set(m.body.storyId, [...(byStory.get(m.body.storyId) ?? []), m]);
    else moves.push(m);
  }
  const jobs: [Message<SearchMessage>[], () => Promise<unknown>][] = [...byStory].map(([storyId, messages]) => [
    messages,
    () => syncStory(db, shards, storyId),
  ]);
  if (moves.length) {
    jobs.push([moves, () => moveSteps(db, shards, MOVE_STEPS_MAX, Date.now() + MOVE_MS)]);
  }
  await Promise.all(
    jobs.map(async ([messages, job]) => {
      try {
        await job();
        for (const m of messages) m.ack();
      } catch (err) {
        console.error(`search sync failed (${messages.length} message(s))`, err);
        for (const m of messages) m.retry({ delaySeconds: backoffSeconds(m.attempts) });
      }
    }),
  );
}

/** The sweeper's part in the move: until it is done and clean, a move message a minute (a lost one is replaced). */
export async function continueMove(env: Env, db: Db): Promise<void> {
  const [next] = await nextToMoveQuery(db);
  if (next && next.legacy_max > 0) await env.SEARCH_SYNC.send({ move: true }, { contentType: "json" });
}
