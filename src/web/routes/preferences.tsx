import { type Context, Hono } from "hono";
import type { AppEnv } from "../../context";
import { preferencesOf } from "../../domain/accounts/preferences";
import { callerOf } from "../../middleware/caller";
import { preferencesBody } from "../../schemas/preferences";
import { setPreferences } from "../../usecases/reading";
import type { FormState } from "../components/forms";
import { fieldsOf, labelsFrom, parseWith, showErrorsIn } from "../support/form-errors";
import { splitTags } from "../support/label-form";
import { PreferencesPage } from "../pages/preferences";
import { cookiePreference, keepInCookie } from "../support/reader-preference";
import { absolute, page } from "../support/render";
import { formPost, pageViewer, viewerOf } from "../support/session";

/**
 * A reader's preferences for the lists: a signed-in reader's kept with their account (the API's
 * `PUT /me/preferences` use case), an anonymous reader's in a cookie (no D1 write). Post/Redirect/Get, as every form.
 */
export const preferenceRoutes = new Hono<AppEnv>();

async function preferencesPage(c: Context<AppEnv>, state: FormState | null = null) {
  const viewer = viewerOf(c);
  const prefs = viewer
    ? await preferencesOf(c.get("db"), viewer.id).then((p) => ({ hideMature: p.hide_mature, hiddenTags: p.hidden_tags }))
    : (cookiePreference(c) ?? { hideMature: false, hiddenTags: [] });
  const saved = c.req.query("saved") === "1";
  return page(c, <PreferencesPage prefs={prefs} canonical={absolute(c, "/preferences")} viewer={pageViewer(c)} state={state} saved={saved} />);
}

preferenceRoutes.get("/preferences", (c) => preferencesPage(c));

preferenceRoutes.post(
  "/preferences",
  formPost,
  showErrorsIn(() => "preferences", labelsFrom({ hidden_tags: "Hidden tags", hide_mature: "Hide mature stories" }), preferencesPage),
  async (c) => {
    const fields = await fieldsOf(c);
    const body = parseWith(preferencesBody, { hide_mature: !!fields.hide_mature, hidden_tags: splitTags(fields.hidden_tags) });
    if (viewerOf(c)) await setPreferences(callerOf(c), body);
    else keepInCookie(c, body);
    return c.redirect("/preferences?saved=1", 303);
  },
);
