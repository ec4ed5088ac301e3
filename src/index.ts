import { app } from "./app";
import type { Env } from "./env";
import type { WebhookMessage } from "./domain/webhook-events";
import { sweep } from "./queue/sweeper";
import { handleQueue } from "./queue/webhooks";

export { AccountGate } from "./durable/account";
export { BranchRoom } from "./durable/branch";

export default {
  fetch: app.fetch,
  queue: (batch, env) => handleQueue(batch as MessageBatch<WebhookMessage>, env),
  scheduled: (_controller, env, ctx) => ctx.waitUntil(sweep(env)),
} satisfies ExportedHandler<Env>;
