/**
 * OAuth's names, without the library: `createApp`'s prefix test (src/app.ts) reads the paths on every
 * request that is not the API's, so this module must cost nothing to load.
 */

/** The scopes: reading (every tool that writes nothing) and writing (every other tool). */
export const SCOPES = { read: "stories:read", write: "stories:write" } as const;
export const ALL_SCOPES = [SCOPES.read, SCOPES.write];

/** Each scope in words, as the consent page and "Connected apps" say it. */
export const SCOPE_WORDS: Record<string, string> = {
  [SCOPES.read]: "read stories, branches and the turn queues",
  [SCOPES.write]: "write: join queues, take turns and write segments, start stories and branches, vote and comment",
};

/** Access tokens live an hour (the library's default), a grant 30 days from its approval, however often refreshed. */
export const ACCESS_TOKEN_SECONDS = 3600;
export const GRANT_SECONDS = 30 * 86_400;

export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

/** The paths the library serves (besides `/mcp`). */
export const OAUTH_SERVER_PATHS = new Set([
  "/.well-known/oauth-authorization-server",
  RESOURCE_METADATA_PATH,
  `${RESOURCE_METADATA_PATH}/mcp`,
  TOKEN_PATH,
  REGISTER_PATH,
]);
