import type { AuthRequest, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { BotRow } from "../db/schema";
import type { Actor } from "../domain/shared/actor";
import { botRefused, newBot } from "../domain/accounts/auth";
import { checkBotCap } from "../domain/accounts/bot-cap";
import { type GrantProps, recordGrant, revokeGrant } from "../domain/accounts/oauth-grants";
import { ownedBot } from "../domain/bots/owned-bots";
import { validationError } from "../lib/errors";
import { botRegisterBody } from "../schemas/auth";
import type { Caller } from "./caller";

/**
 * Connecting an app through OAuth: the person chooses whom it acts as, approves, and the grant is
 * made (the library's, in KV) and recorded (ours, in D1) before the code goes to the app.
 */

export interface IdentityChoice {
  /** `me`, `bot:<id>` (one of the person's live bots) or `new` (a bot made now). */
  identity: string;
  newBotName?: string;
  newBotModel?: string;
}

/** Whom the grant will be; `made`: a bot of the caller's made for it, written only with the grant (`connectApp`). */
export type Identity = Pick<Actor, "id" | "type" | "name"> & { made?: BotRow };

/**
 * Whom the grant will be, checked before anything is consumed or written: the caller, one of their live bots
 * (403/404/409), or a new bot by registration's rules (400 for a bad name; its row made here, its id chosen).
 */
export async function identityFor(caller: Caller, choice: IdentityChoice): Promise<Identity> {
  if (choice.identity === "me") return caller.actor;
  if (choice.identity === "new") return newBotFor(caller, choice);
  const botId = /^bot:(.+)$/.exec(choice.identity)?.[1];
  if (!botId) throw validationError([{ field: "identity", issue: "choose yourself, one of your bots, or a new bot" }]);
  const bot = await ownedBot(caller.db, caller.actor, botId.toLowerCase());
  return { id: bot.id, type: "bot", name: bot.name };
}

async function newBotFor(caller: Caller, choice: IdentityChoice): Promise<Identity> {
  const parsed = botRegisterBody.safeParse({ name: choice.newBotName ?? "", model: choice.newBotModel?.trim() || "assistant" });
  if (!parsed.success)
    throw validationError([{ field: "new_bot_name", issue: "a bot needs a name of 1 to 50 characters, without control or format characters" }]);
  // At the cap the person hears it here, before the consent's handle is spent (the grant's batch checks it again).
  await checkBotCap(caller.db, caller.actor.id, caller.config.limits.botsPerOwner);
  // Its key is never shown: the grant is how it acts.
  const { bot } = await newBot({ ...parsed.data, ownerId: caller.actor.id });
  return { id: bot.id, type: "bot", name: bot.name, made: bot };
}

/**
 * Completes the approved authorization as `identity`: the library's grant (its user is the identity), then in one D1
 * batch our record of it, the bot made for it if any (a taken name: 409, nothing written) and the grants it
 * replaces ended; only then does the library delete those (had it done so first, a failed batch would leave D1
 * listing them live). A grant the library stored whose record failed is never used: its code is not sent, and it
 * expires in ten minutes.
 */
export async function connectApp(caller: Caller, api: OAuthHelpers, approved: AuthRequest, identity: Identity, clientName: string) {
  const props: GrantProps = { actorId: identity.id, actorType: identity.type, actorName: identity.name, personId: caller.actor.id, clientName };
  const { redirectTo } = await api.completeAuthorization({
    request: approved,
    userId: identity.id,
    metadata: { client: clientName },
    scope: approved.scope,
    props,
    revokeExistingGrants: false,
  });
  const grantId = new URL(redirectTo).searchParams.get("code")?.split(":")[1] ?? "";
  const grant = {
    id: grantId,
    personId: caller.actor.id,
    actorId: identity.id,
    actorType: identity.type,
    clientId: approved.clientId,
    clientName: clientName.slice(0, 200),
    redirectUri: approved.redirectUri,
    scope: approved.scope.join(" "),
    createdAt: new Date().toISOString(),
  };
  const cap = caller.config.limits.botsPerOwner;
  const replaced = await recordGrant(caller.db, grant, identity.made && { bot: identity.made, cap }).catch((err) =>
    identity.made ? botRefused(caller.db, caller.actor.id, cap)(err) : Promise.reject(err),
  );
  await Promise.allSettled(replaced.map((id) => api.revokeGrant(id, identity.id)));
  return { redirectTo, replaced };
}

/** Revokes one of the person's connected apps: D1 first (the next call is refused), then the library's tokens. */
export async function disconnectApp(caller: Caller, api: OAuthHelpers, grantId: string) {
  const grant = await revokeGrant(caller.db, caller.actor.id, grantId);
  await api.revokeGrant(grant.id, grant.actorId);
  return grant;
}
