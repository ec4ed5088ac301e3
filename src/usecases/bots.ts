import * as owned from "../domain/bots/owned-bots";
import { checkWebhookUrl } from "../lib/webhook-url";
import type { BotEditBody } from "../schemas/auth";
import type { Caller } from "./caller";
import { expelEverywhere } from "./admin-accounts";

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
