import { app } from "./app";
import type { Env } from "./env";
import type { FanoutMessage } from "./domain/events/inbox-events";
import type { WebhookMessage } from "./domain/events/webhook-events";
import { FANOUT_QUEUE, handleFanout } from "./queue/fanout";
import { sweep } from "./queue/sweeper";
import { handleQueue } from "./queue/webhooks";
import { SEARCH_QUEUE, handleSearch } from "./queue/search";
import type { SearchMessage } from "./durable/search-shards";

export { AccountGate } from "./durable/account";
export { BranchRoom } from "./durable/branch";
export { SearchShard } from "./durable/search-shard";

export default {
  fetch: app.fetch,
  queue: (batch, env) => {
    if (batch.queue === FANOUT_QUEUE) return handleFanout(batch as MessageBatch<FanoutMessage>, env);
    if (batch.queue === SEARCH_QUEUE) return handleSearch(batch as MessageBatch<SearchMessage>, env);
    return handleQueue(batch as MessageBatch<WebhookMessage>, env);
  },
  scheduled: (_controller, env, ctx) => ctx.waitUntil(sweep(env)),
} satisfies ExportedHandler<Env>;
