import { app } from "./app";
import type { Env } from "./env";
import type { FanoutMessage } from "./domain/events/inbox-events";
import type { WebhookMessage } from "./domain/events/webhook-events";
import { FANOUT_QUEUE, handleFanout } from "./queue/fanout";
import { sweep } from "./queue/sweeper";
import { handleQueue } from "./queue/webhooks";

export { AccountGate } from "./durable/account";
export { BranchRoom } from "./durable/branch";

export default {
  fetch: app.fetch,
  queue: (batch, env) =>
    batch.queue === FANOUT_QUEUE ? handleFanout(batch as MessageBatch<FanoutMessage>, env) : handleQueue(batch as MessageBatch<WebhookMessage>, env),
  scheduled: (_controller, env, ctx) => ctx.waitUntil(sweep(env)),
} satisfies ExportedHandler<Env>;
