import { apiTokenOf, call, createStory, registerAdmin, registerBot, registerHuman, storyInput, words } from "./helpers";

/**
 * Who may call each protected route. test/auth-matrix.test.ts turns every row into the same checks: 401 without
 * a credential or with one that is not a credential, 403 FORBIDDEN for the kinds the route refuses, 403
 * PERMISSION_DENIED for someone else's thing on owner-only routes, and the allowed kinds getting through.
 *
 * The rows are the routes whose `middleware:` in src/routes/*.ts starts with `auth(`; the OpenAPI document marks
 * each with `security` (checked by the test), except GET summary, where only `force_refresh=true` needs one.
 */

/** The credentials a caller can present (an admin has a JWT only; API tokens are for humans, API keys for bots). */
export const KINDS = ["human JWT", "human API token", "admin JWT", "bot JWT", "bot API key"] as const;
export type Kind = (typeof KINDS)[number];

/** Which kinds of credential a route takes; every other kind gets 403 FORBIDDEN. */
export const ACCESS = {
  "any credential": KINDS,
  "bot only": ["bot JWT", "bot API key"],
  "human JWT only": ["human JWT", "admin JWT"], // admins are humans; an API token is refused
  moderators: ["admin JWT"], // and humans an admin made moderators (none in this world: test/hide.test.ts has them)
  "a session (JWT or API token)": ["human JWT", "human API token", "admin JWT", "bot JWT"], // an API key is no session
  "admins only": ["admin JWT"],
  "people (any human credential)": ["human JWT", "human API token", "admin JWT"], // a person's bots
} as const satisfies Record<string, readonly Kind[]>;
export type Access = keyof typeof ACCESS;

export interface World {
  /** Owns `story`, its `pin` and `comment`, and `follow`; its JWT is the matrix's "human JWT". */
  owner: Awaited<ReturnType<typeof registerHuman>>;
  /** Owns the webhook; its JWT and API key are the matrix's bot credentials. */
  bot: Awaited<ReturnType<typeof registerBot>>;
  /** A bot `owner` registered with their credential: only they manage it. */
  ownedBot: { id: string };
  story: Awaited<ReturnType<typeof createStory>>;
  segment: { id: string };
  comment: { id: string };
  pin: { id: string };
  /** The owner's follow of the bot. */
  follow: { id: string };
  /** One credential of each kind. The API token is another human's, so that generating the owner's one revokes nothing here. */
  credentials: Record<Kind, string>;
  /** Credentials of accounts that own nothing in this world (admins may act on anything a human owns, so none here). */
  someoneElse: Record<Exclude<Kind, "admin JWT">, string>;
}

export async function buildWorld(): Promise<World> {
  const owner = await registerHuman();
  const reader = await registerHuman();
  const stranger = await registerHuman();
  const admin = await registerAdmin();
  const bot = await registerBot();
  const strangerBot = await registerBot();
  const story = await createStory(owner.token);
  const ownedBot = {
    id: (await call("/auth/bot/register", { token: owner.token, body: { name: `owned${crypto.randomUUID().slice(0, 8)}`, model: "m" } })).body.data.bot_id,
  };
  const segment = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments[1];
  const comment = (await call(`/branches/${story.main_branch_id}/comments`, { token: owner.token, body: { content: "mine" } })).body.data;
  const pin = (await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "T", content: "C" } })).body.data;
  const follow = (await call("/follows", { token: owner.token, body: { target_type: "author", target_id: bot.id } })).body.data;
  return {
    owner,
    bot,
    ownedBot,
    story,
    segment,
    comment,
    pin,
    follow,
    credentials: {
      "human JWT": owner.token,
      "human API token": await apiTokenOf(reader),
      "admin JWT": admin.token,
      "bot JWT": bot.token,
      "bot API key": bot.apiKey,
    },
    someoneElse: {
      "human JWT": stranger.token,
      "human API token": await apiTokenOf(stranger),
      "bot JWT": strangerBot.token,
      "bot API key": strangerBot.apiKey,
    },
  };
}

export interface ProtectedRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The route as the OpenAPI document names it. */
  route: string;
  /** Part of the route here: the query that makes GET summary need a credential. */
  query?: string;
  /** The request in the shared world (a real target, and a body that passes validation); `query` is added to it. */
  path: (w: World) => string;
  body?: (w: World) => unknown;
  access: Access;
  /** Owner-only routes: who may act on the thing. Anyone else with an allowed credential gets 403 PERMISSION_DENIED. */
  owner?: string;
  /** The route takes no credential unless asked for more (GET summary without force_refresh). */
  credentialOptional?: boolean;
  /**
   * A request every allowed credential may send, and what it answers: the check lies behind it, since
   * authentication runs before validation (400) and before the target is looked up (404).
   */
  through: { status: number; because: string; path: (w: World) => string; body?: () => unknown; fresh?: boolean };
}

/** One fresh credential of each kind, for a route whose way through uses it up (a logout). */
export async function freshCredentials(): Promise<Record<Kind, string>> {
  const [human, reader, admin, bot] = await Promise.all([registerHuman(), registerHuman(), registerAdmin(), registerBot()]);
  return { "human JWT": human.token, "human API token": await apiTokenOf(reader), "admin JWT": admin.token, "bot JWT": bot.token, "bot API key": bot.apiKey };
}

const unknown = () => crypto.randomUUID();

export const PROTECTED: ProtectedRoute[] = [
  {
    method: "GET",
    route: "/auth/me",
    path: () => "/auth/me",
    access: "any credential",
    through: { status: 200, because: "the caller", path: () => "/auth/me" },
  },
  {
    method: "GET",
    route: "/me/preferences",
    path: () => "/me/preferences",
    access: "any credential",
    through: { status: 200, because: "the caller's preferences", path: () => "/me/preferences" },
  },
  {
    method: "PUT",
    route: "/me/preferences",
    path: () => "/me/preferences",
    body: () => ({ hide_mature: true, hidden_tags: [] }),
    access: "any credential",
    through: { status: 400, because: "a bad preference", path: () => "/me/preferences", body: () => ({ hide_mature: "yes" }) },
  },
  // Bookmarks and reading progress: any account's own; another's bookmark is 404, not 403.
  {
    method: "POST",
    route: "/me/bookmarks",
    path: () => "/me/bookmarks",
    body: (w) => ({ segment_id: w.segment.id }),
    access: "any credential",
    through: { status: 404, because: "an unknown segment", path: () => "/me/bookmarks", body: () => ({ segment_id: unknown() }) },
  },
  {
    method: "GET",
    route: "/me/bookmarks",
    path: () => "/me/bookmarks",
    access: "any credential",
    through: { status: 200, because: "the caller's bookmarks", path: () => "/me/bookmarks" },
  },
  {
    method: "DELETE",
    route: "/me/bookmarks/{bookmark_id}",
    path: () => `/me/bookmarks/${unknown()}`,
    access: "any credential",
    through: { status: 404, because: "an unknown bookmark", path: () => `/me/bookmarks/${unknown()}` },
  },
  {
    method: "GET",
    route: "/me/progress",
    path: () => "/me/progress",
    access: "any credential",
    through: { status: 200, because: "the caller's places", path: () => "/me/progress" },
  },
  {
    method: "PUT",
    route: "/me/progress/{branch_id}",
    path: (w) => `/me/progress/${w.story.main_branch_id}`,
    body: (w) => ({ segment_id: w.segment.id }),
    access: "any credential",
    through: { status: 404, because: "an unknown branch", path: () => `/me/progress/${unknown()}`, body: () => ({ segment_id: unknown() }) },
  },
  {
    method: "DELETE",
    route: "/me/progress/{branch_id}",
    path: (w) => `/me/progress/${w.story.main_branch_id}`,
    access: "any credential",
    through: { status: 404, because: "no place kept on an unknown branch", path: () => `/me/progress/${unknown()}` },
  },
  {
    method: "POST",
    route: "/auth/api-token/generate",
    path: () => "/auth/api-token/generate",
    access: "human JWT only",
    through: { status: 200, because: "a new API token", path: () => "/auth/api-token/generate" },
  },
  {
    method: "POST",
    route: "/stories",
    path: () => "/stories",
    body: () => storyInput(),
    access: "any credential",
    through: { status: 400, because: "an empty story", path: () => "/stories", body: () => ({}) },
  },
  {
    method: "PATCH",
    route: "/stories/{story_id}",
    path: (w) => `/stories/${w.story.id}`,
    body: () => ({ status: "archived" }),
    access: "any credential",
    owner: "the story's owner or an admin",
    through: { status: 404, because: "an unknown story", path: () => `/stories/${unknown()}`, body: () => ({ status: "archived" }) },
  },
  {
    method: "POST",
    route: "/stories/{story_id}/branches",
    path: (w) => `/stories/${w.story.id}/branches`,
    body: () => ({ title: "t" }),
    access: "any credential",
    through: { status: 404, because: "an unknown story", path: () => `/stories/${unknown()}/branches`, body: () => ({ title: "t" }) },
  },
  {
    method: "POST",
    route: "/branches/{branch_id}/join",
    path: (w) => `/branches/${w.story.main_branch_id}/join`,
    body: () => ({}),
    access: "bot only",
    through: { status: 404, because: "an unknown branch", path: () => `/branches/${unknown()}/join`, body: () => ({}) },
  },
  {
    method: "POST",
    route: "/branches/{branch_id}/leave",
    path: (w) => `/branches/${w.story.main_branch_id}/leave`,
    access: "bot only",
    through: { status: 404, because: "an unknown branch", path: () => `/branches/${unknown()}/leave` },
  },
  {
    method: "POST",
    route: "/branches/{branch_id}/segments",
    path: (w) => `/branches/${w.story.main_branch_id}/segments`,
    body: () => ({ content: words(4) }),
    access: "any credential",
    through: { status: 404, because: "an unknown branch", path: () => `/branches/${unknown()}/segments`, body: () => ({ content: words(4) }) },
  },
  {
    method: "POST",
    route: "/votes",
    path: () => "/votes",
    body: (w) => ({ target_type: "branch", target_id: w.story.main_branch_id, vote: 1 }),
    access: "any credential",
    through: { status: 404, because: "an unknown branch", path: () => "/votes", body: () => ({ target_type: "branch", target_id: unknown(), vote: 1 }) },
  },
  {
    method: "POST",
    route: "/branches/{branch_id}/comments",
    path: (w) => `/branches/${w.story.main_branch_id}/comments`,
    body: () => ({ content: "hi" }),
    access: "any credential",
    through: { status: 404, because: "an unknown branch", path: () => `/branches/${unknown()}/comments`, body: () => ({ content: "hi" }) },
  },
  {
    method: "DELETE",
    route: "/comments/{comment_id}",
    path: (w) => `/comments/${w.comment.id}`,
    access: "any credential",
    owner: "the comment's author or an admin",
    through: { status: 404, because: "an unknown comment", path: () => `/comments/${unknown()}` },
  },
  {
    method: "POST",
    route: "/segments/{segment_id}/rewrites",
    path: (w) => `/segments/${w.segment.id}/rewrites`,
    body: () => ({ content: words(4) }),
    access: "any credential",
    through: { status: 404, because: "an unknown segment", path: () => `/segments/${unknown()}/rewrites`, body: () => ({ content: words(4) }) },
  },
  {
    method: "POST",
    route: "/stories/{story_id}/pins",
    path: (w) => `/stories/${w.story.id}/pins`,
    body: () => ({ title: "T", content: "C" }),
    access: "any credential",
    owner: "the story's owner or an admin",
    through: { status: 404, because: "an unknown story", path: () => `/stories/${unknown()}/pins`, body: () => ({ title: "T", content: "C" }) },
  },
  {
    method: "PATCH",
    route: "/stories/{story_id}/pins/{pin_id}",
    path: (w) => `/stories/${w.story.id}/pins/${w.pin.id}`,
    body: () => ({ is_active: true }),
    access: "any credential",
    owner: "the story's owner or an admin",
    through: { status: 404, because: "an unknown story", path: (w) => `/stories/${unknown()}/pins/${w.pin.id}`, body: () => ({ is_active: true }) },
  },
  {
    method: "GET",
    route: "/logs",
    path: () => "/logs",
    access: "any credential",
    through: { status: 200, because: "the log", path: () => "/logs" },
  },
  {
    method: "GET",
    route: "/logs/stats",
    path: () => "/logs/stats",
    access: "any credential",
    through: { status: 200, because: "the statistics", path: () => "/logs/stats" },
  },
  {
    method: "POST",
    route: "/branches/{branch_id}/summary",
    path: (w) => `/branches/${w.story.main_branch_id}/summary`,
    access: "any credential",
    through: { status: 404, because: "an unknown branch", path: () => `/branches/${unknown()}/summary` },
  },
  {
    method: "GET",
    route: "/branches/{branch_id}/summary",
    query: "?force_refresh=true",
    path: (w) => `/branches/${w.story.main_branch_id}/summary`,
    access: "any credential",
    credentialOptional: true,
    through: { status: 404, because: "an unknown branch", path: () => `/branches/${unknown()}/summary?force_refresh=true` },
  },
  {
    method: "PATCH",
    route: "/branches/{branch_id}/summary",
    path: (w) => `/branches/${w.story.main_branch_id}/summary`,
    body: () => ({ current_summary: "So far: the tide went out." }),
    access: "any credential",
    owner: "the story's owner or an admin",
    through: {
      status: 404,
      because: "an unknown branch",
      path: () => `/branches/${unknown()}/summary`,
      body: () => ({ current_summary: "So far: the tide went out." }),
    },
  },
  {
    method: "PUT",
    route: "/bots/{bot_id}/webhook",
    path: (w) => `/bots/${w.bot.id}/webhook`,
    body: () => ({ webhook_url: "https://a.example/x" }),
    access: "bot only",
    owner: "the bot itself",
    through: { status: 400, because: "a body without webhook_url", path: (w) => `/bots/${w.bot.id}/webhook`, body: () => ({}) },
  },
  {
    method: "GET",
    route: "/bots/{bot_id}/webhook/deliveries",
    path: (w) => `/bots/${w.bot.id}/webhook/deliveries`,
    access: "bot only",
    owner: "the bot itself",
    through: { status: 200, because: "its deliveries", path: (w) => `/bots/${w.bot.id}/webhook/deliveries` },
  },
  {
    method: "GET",
    route: "/bots/{bot_id}/webhook/status",
    path: (w) => `/bots/${w.bot.id}/webhook/status`,
    access: "bot only",
    owner: "the bot itself",
    through: { status: 200, because: "its webhook's status", path: (w) => `/bots/${w.bot.id}/webhook/status` },
  },
  // A person's bots: any human credential, and only the bot's owner.
  {
    method: "GET",
    route: "/me/bots",
    path: () => "/me/bots",
    access: "people (any human credential)",
    through: { status: 200, because: "the caller's bots", path: () => "/me/bots" },
  },
  {
    method: "POST",
    route: "/bots/{bot_id}/api-key",
    path: (w) => `/bots/${w.ownedBot.id}/api-key`,
    access: "people (any human credential)",
    owner: "the bot's owner",
    through: { status: 404, because: "an unknown bot", path: () => `/bots/${unknown()}/api-key` },
  },
  {
    method: "PATCH",
    route: "/bots/{bot_id}",
    path: (w) => `/bots/${w.ownedBot.id}`,
    body: () => ({ model: "m2" }),
    access: "people (any human credential)",
    owner: "the bot's owner",
    through: { status: 404, because: "an unknown bot", path: () => `/bots/${unknown()}`, body: () => ({ model: "m2" }) },
  },
  {
    method: "POST",
    route: "/bots/{bot_id}/retire",
    path: (w) => `/bots/${w.ownedBot.id}/retire`,
    access: "people (any human credential)",
    owner: "the bot's owner",
    through: { status: 404, because: "an unknown bot", path: () => `/bots/${unknown()}/retire` },
  },
  // Hiding and restoring content: moderators only.
  ...(["segments", "comments", "stories", "branches"] as const).flatMap((type): ProtectedRoute[] =>
    (["hide", "restore"] as const).map((action) => ({
      method: "POST",
      route: `/admin/${type}/{id}/${action}`,
      path: (w) =>
        `/admin/${type}/${type === "segments" ? w.segment.id : type === "comments" ? w.comment.id : type === "stories" ? w.story.id : w.story.main_branch_id}/${action}`,
      body: () => ({ reason: "spam" }),
      access: "moderators",
      through: {
        status: 404,
        because: `an unknown ${type.slice(0, -1)}`,
        path: () => `/admin/${type}/${unknown()}/${action}`,
        body: () => ({ reason: "spam" }),
      },
    })),
  ),
  {
    method: "POST",
    route: "/reports",
    path: () => "/reports",
    body: (w) => ({ target_type: "story", target_id: w.story.id, reason: "spam" }),
    access: "any credential",
    through: { status: 404, because: "an unknown story", path: () => "/reports", body: () => ({ target_type: "story", target_id: unknown(), reason: "spam" }) },
  },
  {
    method: "GET",
    route: "/admin/reports",
    path: () => "/admin/reports",
    access: "moderators",
    through: { status: 200, because: "the report queue", path: () => "/admin/reports" },
  },
  {
    method: "POST",
    route: "/admin/reports/{report_id}/resolve",
    path: () => `/admin/reports/${unknown()}/resolve`,
    body: () => ({ action: "dismiss" }),
    access: "moderators",
    through: { status: 404, because: "an unknown report", path: () => `/admin/reports/${unknown()}/resolve`, body: () => ({ action: "dismiss" }) },
  },
  {
    method: "GET",
    route: "/admin/audit",
    path: () => "/admin/audit",
    access: "moderators",
    through: { status: 200, because: "the audit log", path: () => "/admin/audit" },
  },
  {
    method: "POST",
    route: "/auth/logout",
    path: () => "/auth/logout",
    access: "a session (JWT or API token)",
    through: { status: 200, because: "the session revoked (a fresh one of each kind)", path: () => "/auth/logout", fresh: true },
  },
  {
    method: "POST",
    route: "/admin/accounts/{id}/suspend",
    path: (w) => `/admin/accounts/${w.bot.id}/suspend`,
    body: () => ({ reason: "matrix" }),
    access: "moderators",
    through: { status: 404, because: "an unknown account", path: () => `/admin/accounts/${unknown()}/suspend`, body: () => ({ reason: "matrix" }) },
  },
  {
    method: "POST",
    route: "/admin/accounts/{id}/restore",
    path: (w) => `/admin/accounts/${w.bot.id}/restore`,
    body: () => ({}),
    access: "moderators",
    through: { status: 404, because: "an unknown account", path: () => `/admin/accounts/${unknown()}/restore`, body: () => ({}) },
  },
  {
    method: "POST",
    route: "/admin/accounts/{id}/role",
    path: (w) => `/admin/accounts/${w.owner.id}/role`,
    body: () => ({ role: "moderator" }),
    access: "admins only",
    through: { status: 404, because: "an unknown account", path: () => `/admin/accounts/${unknown()}/role`, body: () => ({ role: "user" }) },
  },
  // Follows and the inbox: every account's own.
  {
    method: "POST",
    route: "/follows",
    path: () => "/follows",
    body: (w) => ({ target_type: "story", target_id: w.story.id }),
    access: "any credential",
    through: { status: 404, because: "an unknown story", path: () => "/follows", body: () => ({ target_type: "story", target_id: unknown() }) },
  },
  {
    method: "DELETE",
    route: "/follows/{follow_id}",
    path: (w) => `/follows/${w.follow.id}`,
    access: "any credential",
    owner: "its follower",
    through: { status: 404, because: "an unknown follow", path: () => `/follows/${unknown()}` },
  },
  {
    method: "GET",
    route: "/me/follows",
    path: () => "/me/follows",
    access: "any credential",
    through: { status: 200, because: "its follows", path: () => "/me/follows" },
  },
  {
    method: "GET",
    route: "/me/inbox",
    path: () => "/me/inbox",
    access: "any credential",
    through: { status: 200, because: "its inbox", path: () => "/me/inbox" },
  },
  {
    method: "POST",
    route: "/me/inbox/read",
    path: () => "/me/inbox/read",
    body: () => ({ up_to: new Date().toISOString() }),
    access: "any credential",
    through: { status: 200, because: "its items marked", path: () => "/me/inbox/read", body: () => ({ up_to: new Date().toISOString() }) },
  },
  // The private inbox feed's token: every account's own.
  {
    method: "POST",
    route: "/me/feed-token",
    path: () => "/me/feed-token",
    access: "any credential",
    through: { status: 201, because: "its feed's new address", path: () => "/me/feed-token" },
  },
  {
    method: "DELETE",
    route: "/me/feed-token",
    path: () => "/me/feed-token",
    access: "any credential",
    through: { status: 200, because: "its feed's address revoked", path: () => "/me/feed-token" },
  },
];

/** Things sent as a credential that are none: each is 401, with the code the service gives it. */
export const NOT_CREDENTIALS: { what: string; headers?: Record<string, string>; token?: string; code: string }[] = [
  { what: "an Authorization header that is not Bearer", headers: { Authorization: "Basic abc" }, code: "UNAUTHORIZED" },
  { what: "an unknown bot API key (slk_…)", token: "slk_unknownkey", code: "UNAUTHORIZED" },
  { what: "an unknown API token (slt_…)", token: "slt_unknowntoken", code: "UNAUTHORIZED" },
  { what: "a garbage bearer that is no JWT", token: "garbage", code: "AUTH_INVALID_TOKEN" },
];

/** "a, b and c" */
export const listed = (items: readonly string[]) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);
