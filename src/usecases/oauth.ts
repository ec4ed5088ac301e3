import type { AuthRequest, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Actor } from "../domain/actor";
import { recordGrant, revokeGrant } from "../domain/oauth-grants";
import { ownedBot } from "../domain/owned-bots";
import { validationError } from "../lib/errors";
import type { GrantProps } from "../domain/oauth-grants";
import { botRegisterBody } from "../schemas/auth";
import { registerBot } from "./auth";
import type { Caller } from "./caller";

/**
 * Connecting an app through OAuth (issue 57): the person chooses whom it acts as, approves, and the grant is
 * made (the library's, in KV) and recorded (ours, in D1) before the code goes to the app.
 */

export interface IdentityChoice {
  /** `me`, `bot:<id>` (one of the person's live bots) or `new` (a bot made now). */
  identity: string;
  newBotName?: string;
  newBotModel?: string;
}

type Identity = Pick<Actor, "id" | "type" | "name">;

/** Whom the grant will be: checked before anything is consumed or made (a bot: the caller's own, live; 403/404/409). */
export async function identityFor(caller: Caller, choice: IdentityChoice): Promise<Identity | "new"> {
  if (choice.identity === "me") return caller.actor;
  if (choice.identity === "new") return "new";
  const botId = /^bot:(.+)$/.exec(choice.identity)?.[1];
  if (!botId) throw validationError([{ field: "identity", issue: "choose yourself, one of your bots, or a new bot" }]);
  const bot = await ownedBot(caller.db, caller.actor, botId.toLowerCase());
  return { id: bot.id, type: "bot", name: bot.name };
}

/** A new bot of the caller's, for the grant to act as (registration's rules: 400 for a bad name, 409 for a taken one). */
export async function newBotFor(caller: Caller, choice: IdentityChoice): Promise<Identity> {
  const parsed = botRegisterBody.safeParse({ name: choice.newBotName ?? "", model: choice.newBotModel?.trim() || "assistant" });
  if (!parsed.success)
    throw validationError([{ field: "new_bot_name", issue: "a bot needs a name of 1 to 50 characters, without control or format characters" }]);
  const bot = await registerBot(caller, parsed.data, caller.actor);
  return { id: bot.bot_id, type: "bot", name: bot.name };
}

/**
 * Completes the approved authorization as `identity`: the library's grant (its user is the identity, so a new grant
 * replaces that identity's earlier one for the same app) and our record of it, in D1 before the code is sent.
 */
export async function connectApp(caller: Caller, api: OAuthHelpers, approved: AuthRequest, identity: Identity, clientName: string): Promise<string> {
  const props: GrantProps = { actorId: identity.id, actorType: identity.type, actorName: identity.name, personId: caller.actor.id, clientName };
  const { redirectTo } = await api.completeAuthorization({
    request: approved,
    userId: identity.id,
    metadata: { client: clientName },
    scope: approved.scope,
    props,
  });
  const grantId = new URL(redirectTo).searchParams.get("code")?.split(":")[1] ?? "";
  await recordGrant(caller.db, {
    id: grantId,
    personId: caller.actor.id,
    actorId: identity.id,
    actorType: identity.type,
    clientId: approved.clientId,
    clientName: clientName.slice(0, 200),
    redirectUri: approved.redirectUri,
    scope: approved.scope.join(" "),
    createdAt: new Date().toISOString(),
  });
  return redirectTo;
}

/** Revokes one of the person's connected apps: D1 first (the next call is refused), then the library's tokens. */
export async function disconnectApp(caller: Caller, api: OAuthHelpers, grantId: string) {
  const grant = await revokeGrant(caller.db, caller.actor.id, grantId);
  await api.revokeGrant(grant.id, grant.actorId);
  return grant;
}
