import { AuthorizationError, type AuthRequest, CimdFetchError } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import type { AppEnv } from "../../context";
import { ApiError } from "../../lib/errors";
import { callerOf } from "../../middleware/caller";
import { requireStanding } from "../../middleware/standing";
import { ALL_SCOPES, AUTHORIZE_PATH, SCOPES } from "../../oauth/paths";
import { forgetGrant, oauthApi, oauthEnv } from "../../oauth/servers";
import { myBots } from "../../usecases/bots";
import { connectApp, disconnectApp, identityFor } from "../../usecases/oauth";
import { fieldsOf, optional } from "../support/form-errors";
import type { FormState } from "../components/forms";
import { ConsentPage } from "../pages/consent";
import { absolute, page } from "../support/render";
import { pageViewer, viewerOf } from "../support/session";

/**
 * Signing in an assistant, the part that needs the OAuth library (loaded on these pages' first use,
 * src/web/routes/oauth.tsx): `/oauth/authorize` is the OAuth authorize endpoint as a page of the reader.
 * A visitor signs in (or registers) first and comes back to it; the page names the app, what it may do and whom it
 * will act as; its form (Origin-checked, bound to this browser by the library's consent cookie, under the pages'
 * `frame-ancestors 'none'`) approves or denies. Redirects go only to the redirect URI the library validated
 * exactly against the app's registration, and only once the person pressed Approve or Deny; every failure is a
 * page here, never a redirect.
 * `/me/apps` lists the person's connected apps, each with Revoke.
 */
export const here = (c: Context<AppEnv>) => `${AUTHORIZE_PATH}${new URL(c.req.url).search}`;
const api = (c: Context<AppEnv>) => oauthApi(c.get("config").publicOrigin, c.env, c.get("meter"));
/** The request on the site's own origin: the library checks it arrived at its authorize endpoint. */
const canonical = (c: Context<AppEnv>) => new Request(`${c.get("config").publicOrigin}${here(c)}`, { headers: c.req.raw.headers });

/**
 * The library's refusals as a page in words (400), never a redirect, even with a redirect URI it validated: before
 * the person acted on this page, sending the error there would make the page a redirect to any address anyone
 * registers (DCR) without a click (RFC 9700 §4.11.2). The app hears of a Deny (`denyConsent`), nothing else.
 */
function refused(err: unknown): never {
  if (err instanceof AuthorizationError)
    throw new ApiError("VALIDATION_ERROR", `This sign-in cannot go on: ${(err.description ?? err.code).replace(/\.$/, "")}. Start again from the app.`);
  if (err instanceof CimdFetchError)
    throw new ApiError("VALIDATION_ERROR", "This app could not be verified (its metadata document could not be read). Start again from the app.");
  throw err;
}

/**
 * The CSP source for where Approve and Deny lead: the validated redirect URI's origin (scheme, host and port; CSP
 * ignores a path after a redirect anyway). The library accepts only https, or http on a loopback host, so there is
 * always one; anything else widens nothing.
 */
function formTargetOf(redirectUri: string): string | undefined {
  const url = URL.canParse(redirectUri) ? new URL(redirectUri) : null;
  return url && (url.protocol === "https:" || url.protocol === "http:") ? url.origin : undefined;
}

const parsed = (c: Context<AppEnv>): Promise<AuthRequest> => api(c).parseAuthRequest(canonical(c)).catch(refused);

/** The consent page (its first showing, or again with a form error): a new handle each time, bound to this browser. */
export async function consentPage(c: Context<AppEnv>, state: FormState | null = null): Promise<Response> {
  const viewer = viewerOf(c)!;
  requireStanding(c, viewer, { types: ["human", "admin"] });
  const request = await parsed(c);
  const oauth = api(c);
  const details = await oauth.describeConsent(request);
  const consent = await oauth.beginConsent(request);
  const bots = (await myBots(callerOf(c))).filter((b) => b.status === "active" && !b.suspended);
  const res = await page(
    c,
    <ConsentPage
      canonical={absolute(c, AUTHORIZE_PATH)}
      action={here(c)}
      viewer={pageViewer(c)!}
      details={details}
      handle={consent.handle}
      bots={bots}
      state={state}
    />,
    state ? 400 : 200,
  );
  for (const cookie of consent.headers.getSetCookie()) res.headers.append("Set-Cookie", cookie);
  res.headers.set("Cache-Control", "no-store");
  // Only this page, once shown, lets its form go where Approve and Deny lead (an error page on the way never does).
  const target = formTargetOf(details.redirectUri);
  if (target) c.set("formTarget", target);
  return res;
}

/**
 * The consent form: Deny, or Approve as the chosen identity with the ticked scopes; then back to the app. Whom it
 * acts as is checked (a new bot's name too) before the handle is spent; nothing is written to D1 before the
 * library has made the grant, and then all in one batch (`connectApp`).
 */
export async function decide(c: Context<AppEnv>): Promise<Response> {
  const fields = await fieldsOf(c);
  const oauth = api(c);
  const caller = callerOf(c);
  requireStanding(c, caller.actor, { types: ["human", "admin"] });
  try {
    if (fields.decision !== "approve") {
      const denied = await oauth.denyConsent(canonical(c), fields.handle ?? "");
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const choice = { identity: fields.identity ?? "", newBotName: optional(fields.new_bot_name), newBotModel: optional(fields.new_bot_model) };
    const identity = await identityFor(caller, choice);
    const scope = fields.write === "1" ? ALL_SCOPES : [SCOPES.read];
    const approved = await oauth.approveConsent(canonical(c), fields.handle ?? "", { scope });
    const client = await oauth.describeConsent(approved.request);
    const { redirectTo, replaced } = await connectApp(caller, oauth, approved.request, identity, client.clientName);
    for (const grantId of replaced) forgetGrant(grantId);
    approved.headers.set("Location", redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (err) {
    return refused(err);
  }
}

/** Revoke on Connected apps: our record first (the next call is refused), then the library's tokens. */
export async function revoke(c: Context<AppEnv>, grantId: string) {
  await disconnectApp(callerOf(c), api(c), grantId);
  forgetGrant(grantId);
}

/**
 * The grants an app holds tokens for: D1 records a grant when its person approves, before its code is sent, but
 * a code that never reached the app (a blocked redirect, a closed tab) is never exchanged, and the library's grant
 * lapses with it in ten minutes. A grant used at `/mcp` was exchanged; any other is listed only once the library's
 * record shows its code spent (the code's key is gone from it), so a click that came to nothing leaves no entry.
 */
export async function exchangedGrants<G extends { id: string; actorId: string; lastUsedAt: string | null }>(c: Context<AppEnv>, grants: G[]): Promise<G[]> {
  const kv = oauthEnv(c.env, c.get("meter")).OAUTH_KV;
  const spent = await Promise.all(
    grants.map(async (g) => {
      if (g.lastUsedAt) return true;
      const record = await kv.get<{ authCodeWrappedKey?: string }>(`grant:${g.actorId}:${g.id}`, "json");
      return record !== null && !record.authCodeWrappedKey;
    }),
  );
  return grants.filter((_, i) => spent[i]);
}
