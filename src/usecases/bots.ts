import * as botWebhooks from "../domain/bots/bot-webhooks";
import * as owned from "../domain/bots/owned-bots";
import { pathId } from "../lib/ids";
import { checkWebhookUrl } from "../lib/webhook-url";
import type { BotEditBody } from "../schemas/auth";
import { expelEverywhere } from "./admin-accounts";
import type { Caller } from "./caller";

/** A person's bots: the owner lists, re-keys, edits and retires what they registered. */

export const myBots = ({ db, actor }: Caller) => owned.listOwnedBots(db, actor.id);

/** A new key for the bot; the old one is refused from the next request on. */
export const rotateBotKey = ({ db, actor }: Caller, botId: string) => owned.rotateBotKey(db, actor, botId);

/** Edits the bot's name, model, role or webhook address (checked as registration checks them). */
export async function editBot({ db, config, actor }: Caller, botId: string, body: BotEditBody) {
  const webhookUrl = body.webhook_url ? checkWebhookUrl(body.webhook_url, { allowPrivate: config.allowPrivateWebhooks }) : body.webhook_url;
  return owned.editBot(db, actor, botId, { name: body.name, model: body.model, role: body.role, webhookUrl });
}

/** Grants D1 has ended, to be ended in the OAuth library's store too (the door does it: src/oauth/revoke.ts). */
export type EndGrants = (grants: { id: string; actorId: string }[]) => Promise<void>;

/**
 * Retires the bot, then it leaves every queue it was in (each room passes the turn as a leave does), and the grants
 * acting as it end in the library's store as they did in D1: their refresh tokens stop, as Connected apps' Revoke does.
 */
export async function retireBot(caller: Caller, botId: string, endGrants: EndGrants) {
  const { bot, memberships, grants } = await owned.retireBot(caller.db, caller.actor, botId);
  await endGrants(grants);
  await expelEverywhere(caller, memberships, "left");
  return bot;
}

/**
 * Sets the bot's webhook address (the bot itself only), with a new signing secret. `botId` is as the request names
 * it: the address is checked first, as registration checks it, so a bad address is 400 whatever the id, and only
 * then does a malformed id name no bot (404).
 */
export function setWebhook({ db, config, actor }: Caller, botId: string, webhookUrl: string) {
  const url = checkWebhookUrl(webhookUrl, { allowPrivate: config.allowPrivateWebhooks });
  return botWebhooks.setWebhook(db, actor, pathId(botId, "Bot"), url);
}
