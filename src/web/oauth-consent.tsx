import { AuthorizationError, type AuthRequest, CimdFetchError } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import type { AppEnv } from "../context";
import { ApiError } from "../lib/errors";
import { callerOf } from "../middleware/caller";
import { requireStanding } from "../middleware/standing";
import { ALL_SCOPES, AUTHORIZE_PATH, SCOPES } from "../oauth/paths";
import { forgetGrant, oauthApi } from "../oauth/servers";
import { myBots } from "../usecases/bots";
import { connectApp, disconnectApp, identityFor, newBotFor } from "../usecases/oauth";
import { fieldsOf, optional } from "./form-errors";
import type { FormState } from "./forms";
import { ConsentPage } from "./oauth-pages";
import { absolute, page } from "./render";
import { pageViewer, viewerOf } from "./session";

/**
 * Signing in an assistant (issue 57), the part that needs the OAuth library (loaded on these pages' first use,
 * src/web/oauth-routes.tsx): `/oauth/authorize` is the OAuth authorize endpoint as a page of the reader.
 * A visitor signs in (or registers) first and comes back to it; the page names the app, what it may do and whom it
 * will act as; its form (Origin-checked, bound to this browser by the library's consent cookie, under the pages'
 * `frame-ancestors 'none'`) approves or denies. Redirects go only to the redirect URI the library validated
 * exactly against the app's registration; any other failure is a page here, never a redirect.
 * `/me/apps` lists the person's connected apps, each with Revoke.
 */
export const here = (c: Context<AppEnv>) => `${AUTHORIZE_PATH}${new URL(c.req.url).search}`;
const api = (c: Context<AppEnv>) => oauthApi(c.get("config").publicOrigin, c.env);
/** The request on the site's own origin: the library checks it arrived at its authorize endpoint. */
const canonical = (c: Context<AppEnv>) => new Request(`${c.get("config").publicOrigin}${here(c)}`, { headers: c.req.raw.headers });

/** The library's refusals of a request it cannot trust as a page in words (400); with a validated redirect URI, back to the app. */
function refused(c: Context<AppEnv>, err: unknown): Response {
  if (err instanceof AuthorizationError && err.redirectTo) return c.redirect(err.redirectTo, 302);
  if (err instanceof AuthorizationError)
    throw new ApiError("VALIDATION_ERROR", `This sign-in cannot go on: ${err.description ?? err.code}. Start again from the app.`);
  if (err instanceof CimdFetchError)
    throw new ApiError("VALIDATION_ERROR", "This app could not be verified (its metadata document could not be read). Start again from the app.");
  throw err;
}

async function parsed(c: Context<AppEnv>): Promise<AuthRequest | Response> {
  try {
    return await api(c).parseAuthRequest(canonical(c));
  } catch (err) {
    return refused(c, err);
  }
}

/** The consent page (its first showing, or again with a form error): a new handle each time, bound to this browser. */
export async function consentPage(c: Context<AppEnv>, state: FormState | null = null): Promise<Response> {
  const viewer = viewerOf(c)!;
  requireStanding(c, viewer, { types: ["human", "admin"] });
  const request = await parsed(c);
  if (request instanceof Response) return request;
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
  return res;
}

/** The consent form: Deny, or Approve as the chosen identity with the ticked scopes; then back to the app. */
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
    const chosen = await identityFor(caller, choice);
    const scope = fields.write === "1" ? ALL_SCOPES : [SCOPES.read];
    const approved = await oauth.approveConsent(canonical(c), fields.handle ?? "", { scope });
    const identity = chosen === "new" ? await newBotFor(caller, choice) : chosen;
    const client = await oauth.describeConsent(approved.request);
    const redirectTo = await connectApp(caller, oauth, approved.request, identity, client.clientName);
    approved.headers.set("Location", redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (err) {
    if (err instanceof AuthorizationError || err instanceof CimdFetchError) return refused(c, err);
    throw err;
  }
}

/** Revoke on Connected apps: our record first (the next call is refused), then the library's tokens. */
export async function revoke(c: Context<AppEnv>, grantId: string) {
  await disconnectApp(callerOf(c), api(c), grantId);
  forgetGrant(grantId);
}
