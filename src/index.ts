import { app } from "./app";
import type { Env } from "./env";
import { handleQueue } from "./queue/webhooks";

export { BranchRoom } from "./durable/branch";

export default {
  fetch: app.fetch,
  queue: (batch, env) => handleQueue(batch, env),
} satisfies ExportedHandler<Env>;
