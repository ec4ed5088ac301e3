import {
  type SearchPlan,
  type ShardAnswer,
  type ShardQuery,
  type ShardStats,
  factorsOf,
  keysQuery,
  mergeSearch,
  pickPage,
  pickedQuery,
  scoredQuery,
  statsQuery,
} from "../domain/discovery/search";
import type { StorySnapshot } from "../domain/discovery/search-snapshot";
import { configOf } from "../config";
import type { Env } from "../env";
import { RequestMeter } from "../lib/meter";
import type { SearchShard } from "./search-shard";

/** What travels on the search queue: a story whose shard copy is behind (src/usecases/search.ts), or the move's next step. */
export type SearchMessage = { storyId: string } | { move: true };

/** The stories remembered (a window each): past this many, the memory starts again (a hand-over more, never one less). */
const HANDED_OVER_MAX = 10_000;
/**
 * When this isolate last handed each story over: times only, shared by the isolate's requests (no request's I/O
 * object: src/lib/read-leases.ts says why that matters).
 */
const handedOver = new Map<string, number>();

/**
 * The caller's side of the search shards: which shard holds a story (a range of `storiesPerShard` story rowids
 * each: shard 0 holds rowids 1 to N), asking them all at once, and handing a changed story to the search queue.
 */
export class SearchShards {
  constructor(
    private readonly namespace: DurableObjectNamespace<SearchShard>,
    private readonly queue: Queue<SearchMessage>,
    readonly storiesPerShard: number,
    /** A story is handed to the search queue at most once this window a Worker isolate (`changed`); 0: every time. */
    private readonly handOverMs: number,
    private readonly meter: RequestMeter = new RequestMeter(),
  ) {}

  /** The shard of the story with this rowid. */
  shardOf(rowid: number): number {
    return Math.floor((rowid - 1) / this.storiesPerShard);
  }

  private stub(shard: number) {
    return this.namespace.get(this.namespace.idFromName(`search-${shard}`));
  }

  /**
   * Every shard's answer to the plan, at once, merged with D1's: the page and its counts. The first page is one call
   * a shard (each reads its best `limit` hits whole); a later page two: every shard's keys of its best
   * `offset + limit`, then the page's hits read from the shards that hold them.
   */
  async search(plan: SearchPlan) {
    const count = plan.maxRowid > 0 ? this.shardOf(plan.maxRowid) + 1 : 0;
    const shards = Array.from({ length: count }, (_, k) => k);
    const ask = (shard: number, q: ShardQuery) => this.stub(shard).search(q) as Promise<ShardAnswer>;
    return this.meter.timeObject("SearchShard", async () => {
      const queries = await this.scored(plan.shard, shards);
      const first = (k: number) => (plan.q.offset === 0 ? queries[k] : keysQuery(queries[k]));
      const answers = await Promise.all(shards.map((k) => ask(k, first(k))));
      if (plan.q.offset === 0) return mergeSearch(plan, answers);
      const { rows, fromShards } = pickPage(plan, answers);
      const picked = await Promise.all([...fromShards].map(([k, keys]) => ask(k, pickedQuery(queries[k], keys))));
      return mergeSearch(plan, answers, [...rows, ...picked.flatMap((a) => a.rows ?? [])]);
    });
  }

  /**
   * Each shard's query: as planned when one shard holds every story, else scored with every shard's statistics (one
   * more call a shard first), so hits from different shards rank as one index of all of them ranks them.
   */
  private async scored(query: ShardQuery, shards: number[]): Promise<ShardQuery[]> {
    if (shards.length <= 1) return shards.map(() => query);
    const stats = await Promise.all(shards.map((k) => this.stub(k).stats(statsQuery(query)) as Promise<ShardStats>));
    return factorsOf(stats).map((factors) => scoredQuery(query, factors));
  }

  /** A story's state, into its shard. */
  apply(snapshot: StorySnapshot): Promise<void> {
    return this.stub(this.shardOf(snapshot.story.rowid)).apply(snapshot);
  }

  /**
   * Hands stories whose shard copy is behind to the search queue, each at most once a `handOverMs` window in this
   * isolate: the first hand-over of a window is delivered when the window ends, so its sync reads every write the
   * window's later hand-overs skipped (each was committed before its skip). A busy story costs a message a second, not a
   * message a write. What a crash loses, the sweeper hands over again. `atOnce`: delivered now, past any window, and
   * opening none (the sweeper's hand-over, a failed sync's, a new story's first).
   */
  async changed(storyIds: string[], atOnce = false): Promise<void> {
    const now = Date.now();
    const due = [...new Set(storyIds)].filter((id) => atOnce || !((handedOver.get(id) ?? 0) > now - this.handOverMs));
    if (!due.length) return;
    if (handedOver.size > HANDED_OVER_MAX) handedOver.clear();
    // Delivered at once, it opens no window: a write just after it must hand its story over.
    if (!atOnce) for (const id of due) handedOver.set(id, now);
    try {
      const delaySeconds = atOnce ? 0 : Math.ceil(this.handOverMs / 1000);
      await this.queue.sendBatch(due.map((storyId) => ({ body: { storyId } satisfies SearchMessage, contentType: "json" as const, delaySeconds })));
    } catch (err) {
      // Lost: the next write hands the story over again (the sweeper meanwhile).
      for (const id of due) handedOver.delete(id);
      console.error(`could not queue the search sync of ${storyIds.length} story(ies); the sweeper will`, err);
    }
  }
}

/** The search shards of an environment, as its config says (a request's meter times their calls; none elsewhere). */
export function searchShardsOf(env: Env, meter?: RequestMeter): SearchShards {
  const { storiesPerShard, handOverMs } = configOf(env).search;
  return new SearchShards(env.SEARCH_SHARD, env.SEARCH_SYNC, storiesPerShard, handOverMs, meter);
}
