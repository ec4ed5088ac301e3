import {
  AuthorizationError,
  OAuthAuthorizationServer,
  type OAuthHelpers,
  type OAuthResourceAuth,
  OAuthResourceServer,
  type ValidatedAccessToken,
} from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env";
import type { GrantProps } from "../domain/accounts/oauth-grants";
import type { D1Counter } from "../lib/meter";
import { oauthKv } from "./consistent-kv";
import { ACCESS_TOKEN_SECONDS, ALL_SCOPES, AUTHORIZE_PATH, GRANT_SECONDS, REGISTER_PATH, TOKEN_PATH } from "./paths";
import { refreshVerdict } from "./refresh";
import { registrationRefusal } from "./registration";

/**
 * OAuth 2.1 for `/mcp`, with Cloudflare's library in its two roles, both in this Worker: the
 * authorization server (metadata, DCR, CIMD, the token and revocation endpoint; the authorize endpoint is our own
 * page, src/web/routes/oauth.tsx) and the protected resource `{origin}/mcp` (its metadata, the 401 challenge, the
 * token's audience). Built once per origin (the config's `PUBLIC_ORIGIN`).
 * Why, and what was weighed: docs/decisions.md, "Bots people own and OAuth on `/mcp`".
 */

/** What `/mcp` is handed by the resource server for a valid OAuth token. */
export interface OAuthCall {
  props: GrantProps;
  auth: OAuthResourceAuth;
}

/** The execution context the resource server hands its handler: ours, carrying the rest of the `/mcp` request. */
type McpContext = ExecutionContext & { serve: (call: OAuthCall) => Promise<Response> };

export interface OAuthServers {
  authorization: OAuthAuthorizationServer<Env>;
  resource: OAuthResourceServer<Env, GrantProps>;
  /** `{origin}/mcp`: every token's audience. */
  resourceUrl: string;
}

function build(origin: string): OAuthServers {
  const resourceUrl = `${origin}/mcp`;
  const authorization = new OAuthAuthorizationServer<Env>({
    issuer: origin,
    resources: [resourceUrl],
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    scopesSupported: ALL_SCOPES,
    clientIdMetadataDocumentEnabled: true,
    accessTokenTTL: ACCESS_TOKEN_SECONDS,
    refreshTokenTTL: GRANT_SECONDS,
    // Where a refresh's presented token is judged (a rotated one: its lost answer, or the grant ended).
    tokenExchangeCallback: refreshVerdict,
    // A registration is held to a few short fields (its name and addresses are shown to people).
    clientRegistrationCallback: registrationRefusal,
  });
  const resource = new OAuthResourceServer<Env, GrantProps>({
    resourceMetadata: { resource: resourceUrl, authorization_servers: [origin], bearer_methods_supported: ["header"], resource_name: "Storyloom" },
    // Both scopes, advertised (not enforced: `/mcp` checks the write scope per tool): a host asks for what it is
    // told, and one that asked to read only failed its first write. The person still unticks writing on consent.
    requiredScopes: ALL_SCOPES,
    validateToken: (env) => (audience, token) => validated(token, () => authorization.validateToken<GrantProps>(audience, token, env)),
    handler: { fetch: (_request, _env, ctx) => (ctx as unknown as McpContext).serve({ props: ctx.props, auth: ctx.auth }) },
  });
  return { authorization, resource, resourceUrl };
}

/**
 * Tokens this isolate validated, for up to VALIDATION_CACHE_MS (never past their expiry): a token's record never
 * changes, so a host's next calls skip the KV read and the props' decryption. What can end a token sooner, a
 * revoke, is read from D1 in every call's standing statement (src/domain/standing/rule.ts), and a revoke made here
 * forgets its grant's tokens at once (`forgetGrant`).
 */
const VALIDATION_CACHE_MS = 60_000;
const VALIDATION_CACHE_SIZE = 10_000;
type Validation = ValidatedAccessToken<GrantProps> | null;
const validations = new Map<string, { validation: NonNullable<Validation>; until: number }>();

async function validated(token: string, validate: () => Promise<Validation>): Promise<Validation> {
  const now = Date.now();
  const known = validations.get(token);
  if (known && known.until > now) return known.validation;
  const validation = await validate();
  if (validation) {
    if (validations.size >= VALIDATION_CACHE_SIZE) validations.clear();
    validations.set(token, { validation, until: Math.min(now + VALIDATION_CACHE_MS, (validation.expiresAt ?? 0) * 1000 || now + VALIDATION_CACHE_MS) });
  } else validations.delete(token);
  return validation;
}

/** A revoke made in this isolate: its tokens are validated again (and refused) from the next call on. */
export function forgetGrant(grantId: string) {
  for (const token of validations.keys()) if (grantIdOf(token) === grantId) validations.delete(token);
}

const servers = new Map<string, OAuthServers>();

export function oauthServers(origin: string): OAuthServers {
  const known = servers.get(origin);
  if (known) return known;
  const built = build(origin);
  servers.set(origin, built);
  return built;
}

/**
 * The bindings the library is handed for one request: `OAUTH_KV` read through D1's primary on a miss
 * (src/oauth/consistent-kv.ts), in a session opened on first use and metered as the request's (Server-Timing).
 */
export const oauthEnv = (env: Env, meter: D1Counter): Env => ({ ...env, OAUTH_KV: oauthKv(env, meter) });

/** The context for `resource.fetch`: the request's own (for `waitUntil`), with the handler's continuation. */
export function mcpContext(ctx: ExecutionContext | undefined, serve: McpContext["serve"]): ExecutionContext {
  return {
    waitUntil: (p: Promise<unknown>) => ctx?.waitUntil(p),
    passThroughOnException: () => ctx?.passThroughOnException(),
    props: {},
    serve,
  } as unknown as ExecutionContext;
}

/** The library's helpers (parse an authorization request, consent, complete, revoke) for this origin. */
export const oauthApi = (origin: string, env: Env, meter: D1Counter) => pkceRequired(oauthServers(origin).authorization.getOAuthApi(oauthEnv(env, meter)));

/**
 * PKCE (S256) of every client, as OAuth 2.1 and MCP require: the library asks it only of public clients, so a
 * confidential one (`client_secret_basic`) could get and redeem a code without. Its parse refuses a request without
 * a `code_challenge` as it refuses other invalid requests (`invalid_request`, with the validated redirect); the
 * library itself refuses `plain` (the metadata says S256 only).
 */
function pkceRequired(api: OAuthHelpers): OAuthHelpers {
  const parse = api.parseAuthRequest.bind(api);
  api.parseAuthRequest = async (request) => {
    const parsed = await parse(request);
    if (!parsed.codeChallenge)
      throw new AuthorizationError("invalid_request", {
        description: "PKCE is required of every client: send a code_challenge (S256)",
        redirectUri: parsed.redirectUri,
        state: parsed.state || undefined,
        issuer: parsed.issuer,
      });
    return parsed;
  };
  return api;
}

/** The grant a token of ours belongs to: its middle part. */
export const grantIdOf = (token: string) => token.split(":")[1] ?? "";
