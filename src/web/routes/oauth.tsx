import { type Context, Hono } from "hono";
import type { AppEnv } from "../../context";
import { listGrants } from "../../domain/accounts/oauth-grants";
import { requireStanding } from "../../middleware/standing";
import { AUTHORIZE_PATH } from "../../oauth/paths";
import { oauthFailureLimit, registrationLimitWhen } from "../../middleware/subject-limits";
import { fieldsOf, labelsFrom, showErrorsIn } from "../support/form-errors";
import type { FormState } from "../components/forms";
import { ConnectedAppsPage } from "../pages/connected-apps";
import { absolute, page } from "../support/render";
import { formPost, pageViewer, requireSession, viewerOf } from "../support/session";

/**
 * Signing in an assistant: `/oauth/authorize` is the OAuth authorize endpoint as a page of the reader.
 * A visitor signs in (or registers) first and comes back to it; the page names the app, what it may do and whom it
 * will act as; its form (Origin-checked, bound to this browser by the library's consent cookie, under the pages'
 * `frame-ancestors 'none'`) approves or denies. Redirects go only to the redirect URI the library validated
 * exactly against the app's registration, once the person pressed Approve or Deny; every failure is a page here,
 * never a redirect. Failed consents count against the address's OAuth failures, and a bot made here is a
 * registration (the registration limit, as on My bots and `POST /auth/bot/register`). The OAuth library
 * is loaded on these pages' first use (src/web/routes/oauth-consent.tsx), so other pages never evaluate it.
 * `/me/apps` lists the person's connected apps, each with Revoke.
 */
export const oauthPageRoutes = new Hono<AppEnv>();

const consent = () => import("./oauth-consent");
const hereOf = (c: Context<AppEnv>) => `${AUTHORIZE_PATH}${new URL(c.req.url).search}`;
const consentAgain = async (c: Context<AppEnv>, state: FormState) => (await consent()).consentPage(c, state);

oauthPageRoutes.get(AUTHORIZE_PATH, requireSession(hereOf), async (c) => (await consent()).consentPage(c));

/** The form approves a new bot: a registration (counted when the app is sent its code). */
const makesBot = async (c: Context<AppEnv>) => {
  const fields = await fieldsOf(c);
  return fields.decision === "approve" && fields.identity === "new";
};

oauthPageRoutes.post(
  AUTHORIZE_PATH,
  formPost,
  requireSession(hereOf),
  showErrorsIn(() => "consent", labelsFrom({ identity: "It will act as", new_bot_name: "New bot's name", new_bot_model: "New bot's model" }), consentAgain),
  oauthFailureLimit,
  registrationLimitWhen(makesBot, (status) => status === 302),
  async (c) => (await consent()).decide(c),
);

// ---- Connected apps ----

const APPS = "/me/apps";

async function appsPage(c: Context<AppEnv>, state: FormState | null = null) {
  const viewer = viewerOf(c)!;
  requireStanding(c, viewer, { types: ["human", "admin"] });
  const grants = await (await consent()).exchangedGrants(c, await listGrants(c.get("db"), viewer.id));
  return page(c, <ConnectedAppsPage canonical={absolute(c, APPS)} viewer={pageViewer(c)!} grants={grants} state={state} />);
}

oauthPageRoutes.get(
  APPS,
  requireSession(() => APPS),
  (c) => appsPage(c),
);

oauthPageRoutes.post(
  `${APPS}/:grant_id/revoke`,
  formPost,
  requireSession(() => APPS),
  showErrorsIn((c) => `revoke-${c.req.param("grant_id")}`, labelsFrom({}), appsPage),
  async (c) => {
    await (await consent()).revoke(c, c.req.param("grant_id") ?? "");
    return c.redirect(APPS, 303);
  },
);
