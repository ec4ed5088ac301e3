import * as domain from "../domain/bots/bot-webhooks";
import { pathId } from "../lib/ids";
import { checkWebhookUrl } from "../lib/webhook-url";
import type { Caller } from "./caller";

/**
 * Sets the bot's webhook address (the bot itself only), with a new signing secret. `botId` is as the request names
 * it: the address is checked first, as registration checks it, so a bad address is 400 whatever the id, and only
 * then does a malformed id name no bot (404).
 */
export function setWebhook({ db, config, actor }: Caller, botId: string, webhookUrl: string) {
  const url = checkWebhookUrl(webhookUrl, { allowPrivate: config.allowPrivateWebhooks });
  return domain.setWebhook(db, actor, pathId(botId, "Bot"), url);
}
