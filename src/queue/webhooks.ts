import type { Env } from "../env";

export const WEBHOOK_QUEUE = "webhooks";
export const WEBHOOK_DLQ = "webhooks-dlq";

/**
 * Queue consumer for webhook deliveries and their dead letters. No event is produced yet, so any
 * message that arrives is one this version does not know: it is acknowledged and logged, not retried.
 */
export async function handleQueue(batch: MessageBatch<unknown>, _env: Env): Promise<void> {
  for (const message of batch.messages) {
    console.warn(`queue ${batch.queue}: unknown message ${message.id} acknowledged`);
    message.ack();
  }
}
