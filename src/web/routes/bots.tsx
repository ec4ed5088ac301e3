import { type Context, Hono } from "hono";
import type { AppEnv } from "../../context";
import { pathId } from "../../lib/ids";
import { callerOf, guestOf } from "../../middleware/caller";
import { requireStanding } from "../../middleware/standing";
import { registrationLimit } from "../../middleware/subject-limits";
import { botEditBody, botRegisterBody } from "../../schemas/auth";
import { registerBot } from "../../usecases/auth";
import { endLibraryGrants } from "../../oauth/revoke";
import { editBot, myBots, retireBot, rotateBotKey } from "../../usecases/bots";
import { MyBotsPage, type ShownOnce } from "../pages/my-bots";
import { fieldsOf, labelsFrom, optional, parseWith, showErrorsIn } from "../support/form-errors";
import type { FormState } from "../components/forms";
import { absolute, page } from "../support/render";
import { formPost, pageViewer, requireSession, viewerOf } from "../support/session";

/**
 * "My bots": `/me/bots` lists the signed-in person's bots; its forms make one, rotate a key, edit and
 * retire, through the API's own use cases and schemas. A key made here is shown on the answer to its POST alone
 * (no redirect could carry it), under `Cache-Control: no-store`; every other success is a 303 back to the list.
 */
export const botPageRoutes = new Hono<AppEnv>();

const MY_BOTS = "/me/bots";

async function myBotsPage(c: Context<AppEnv>, state: FormState | null = null, shown: ShownOnce | null = null) {
  const viewer = viewerOf(c)!;
  requireStanding(c, viewer, { types: ["human", "admin"] });
  const bots = await myBots(callerOf(c));
  const res = await page(
    c,
    <MyBotsPage
      canonical={absolute(c, MY_BOTS)}
      viewer={pageViewer(c)!}
      bots={bots}
      state={state}
      shown={shown}
      botCap={c.get("config").limits.botsPerOwner}
    />,
  );
  if (shown) res.headers.set("Cache-Control", "no-store");
  return res;
}

const labels = labelsFrom({ name: "Name", model: "Model", role: "Role", webhook_url: "Webhook address" });
const botIdOf = (c: Context<AppEnv>) => pathId(c.req.param("bot_id") ?? "", "Bot");
const session = requireSession(() => MY_BOTS);

botPageRoutes.get(MY_BOTS, session, (c) => myBotsPage(c));

botPageRoutes.post(
  MY_BOTS,
  formPost,
  session,
  showErrorsIn(() => "new-bot", labels, myBotsPage),
  registrationLimit,
  async (c) => {
    const fields = await fieldsOf(c);
    const bot = await registerBot(guestOf(c), parseWith(botRegisterBody, { name: fields.name, model: fields.model }), viewerOf(c)!);
    return myBotsPage(c, null, { botName: bot.name, apiKey: bot.api_key });
  },
);

botPageRoutes.post(
  `${MY_BOTS}/:bot_id/api-key`,
  formPost,
  session,
  showErrorsIn((c) => `rotate-${c.req.param("bot_id")}`, labels, myBotsPage),
  async (c) => {
    const { api_key } = await rotateBotKey(callerOf(c), botIdOf(c));
    const bot = (await myBots(callerOf(c))).find((b) => b.id === botIdOf(c));
    return myBotsPage(c, null, { botName: bot?.name ?? "your bot", apiKey: api_key });
  },
);

botPageRoutes.post(
  `${MY_BOTS}/:bot_id`,
  formPost,
  session,
  showErrorsIn((c) => `edit-${c.req.param("bot_id")}`, labels, myBotsPage),
  async (c) => {
    const fields = await fieldsOf(c);
    const body = parseWith(botEditBody, {
      name: fields.name,
      model: fields.model,
      role: optional(fields.role) ?? null,
      webhook_url: optional(fields.webhook_url) ?? null,
    });
    const edited = await editBot(callerOf(c), botIdOf(c), body);
    if ("webhook_secret" in edited && edited.webhook_secret) return myBotsPage(c, null, { botName: edited.name, webhookSecret: edited.webhook_secret });
    return c.redirect(MY_BOTS, 303);
  },
);

botPageRoutes.post(
  `${MY_BOTS}/:bot_id/retire`,
  formPost,
  session,
  showErrorsIn((c) => `retire-${c.req.param("bot_id")}`, labels, myBotsPage),
  async (c) => {
    await retireBot(callerOf(c), botIdOf(c), (grants) => endLibraryGrants(c, grants));
    return c.redirect(MY_BOTS, 303);
  },
);
