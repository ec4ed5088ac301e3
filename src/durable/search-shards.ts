import type { SearchPlan, ShardAnswer } from "../domain/discovery/search";
import { mergeSearch } from "../domain/discovery/search";
import type { StorySnapshot } from "../domain/discovery/search-snapshot";
import { RequestMeter } from "../lib/meter";
import type { SearchShard } from "./search-shard";

/** What travels on the search queue: a story whose shard copy is behind (src/usecases/search.ts), or the move's next step. */
export type SearchMessage = { storyId: string } | { move: true };

/**
 * The caller's side of the search shards: which shard holds a story (a range of `storiesPerShard` story rowids
 * each: shard 0 holds rowids 1 to N), asking them all at once, and handing a changed story to the search queue.
 */
export class SearchShards {
  constructor(
    private readonly namespace: DurableObjectNamespace<SearchShard>,
    private readonly queue: Queue<SearchMessage>,
    readonly storiesPerShard: number,
    private readonly meter: RequestMeter = new RequestMeter(),
  ) {}

  /** The shard of the story with this rowid. */
  shardOf(rowid: number): number {
    return Math.floor((rowid - 1) / this.storiesPerShard);
  }

  private stub(shard: number) {
    return this.namespace.get(this.namespace.idFromName(`search-${shard}`));
  }

  /** Every shard's answer to the plan, at once, merged with D1's: the page and its counts. */
  async search(plan: SearchPlan) {
    const shards = plan.maxRowid > 0 ? this.shardOf(plan.maxRowid) + 1 : 0;
    const answers = await this.meter.timeObject("search shards", () =>
      Promise.all(Array.from({ length: shards }, (_, k) => this.stub(k).search(plan.shard) as Promise<ShardAnswer>)),
    );
    return mergeSearch(plan, answers);
  }

  /** A story's state, into its shard. */
  apply(snapshot: StorySnapshot): Promise<void> {
    return this.stub(this.shardOf(snapshot.story.rowid)).apply(snapshot);
  }

  /** Hands stories whose shard copy is behind to the search queue (the sweeper hands over again what this loses). */
  async changed(storyIds: string[]): Promise<void> {
    if (!storyIds.length) return;
    try {
      await this.queue.sendBatch([...new Set(storyIds)].map((storyId) => ({ body: { storyId } satisfies SearchMessage, contentType: "json" as const })));
    } catch (err) {
      console.error(`could not queue the search sync of ${storyIds.length} story(ies); the sweeper will`, err);
    }
  }
}
