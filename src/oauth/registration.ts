import type { ClientRegistrationCallbackOptions, ClientRegistrationCallbackResult } from "@cloudflare/workers-oauth-provider";
import type { Context, Next } from "hono";
import type { AppEnv } from "../context";
import { libraryJson } from "./answers";
import { oauthKv } from "./consistent-kv";
import { tokenId } from "./live-grant";
import { GRANT_SECONDS } from "./paths";

/**
 * Dynamic Client Registration (RFC 7591) bounded, and cheap for a host that connects many people. Every client is
 * stored (KV for 90 days, renewed while used), and its name and addresses are shown on the consent page and in
 * Connected apps, so a registration is held to a few short fields. A public client's registration identical to one
 * already made answers that client again (RFC 7591 §3.2.1 lets one id serve many instances of a client) and is not
 * counted against the address: a hosted assistant registers the same metadata for each person it connects, from a
 * few shared addresses.
 */

export const REGISTRATION_BOUNDS = {
  /** `client_name` (and each of its language variants), in characters. */
  name: 100,
  redirectUris: 5,
  /** Any URI: a redirect URI, logo, client, policy, terms or JWKS address. */
  uri: 2000,
  contacts: 5,
  contact: 254,
  /** The whole metadata, in characters of JSON: a registration is a few hundred (a software statement a few more). */
  metadata: 16_384,
} as const;

const B = REGISTRATION_BOUNDS;
const URI_FIELDS = ["logo_uri", "client_uri", "policy_uri", "tos_uri", "jwks_uri"];
const chars = (value: unknown) => (typeof value === "string" ? [...value].length : 0);
/** A field and its language variants (`client_name#fr`, RFC 7591 §2.2). */
const variants = (metadata: Record<string, unknown>, field: string) => Object.keys(metadata).filter((key) => key === field || key.startsWith(`${field}#`));

const refusal = (description: string, code = "invalid_client_metadata"): ClientRegistrationCallbackResult => ({ code, description, status: 400 });

/**
 * The library's `clientRegistrationCallback`: the bounds, refused with RFC 7591's errors (400
 * `invalid_redirect_uri` for the redirect URIs, `invalid_client_metadata` for the rest). The library has already
 * refused metadata of the wrong types.
 */
export function registrationRefusal({
  clientMetadata: m,
}: Pick<ClientRegistrationCallbackOptions, "clientMetadata">): ClientRegistrationCallbackResult | undefined {
  if (JSON.stringify(m).length > B.metadata) return refusal(`The client metadata is at most ${B.metadata} characters of JSON`);
  for (const key of variants(m, "client_name")) if (chars(m[key]) > B.name) return refusal(`${key} is at most ${B.name} characters`);
  const redirects = Array.isArray(m.redirect_uris) ? m.redirect_uris : [];
  if (redirects.length > B.redirectUris) return refusal(`At most ${B.redirectUris} redirect_uris`, "invalid_redirect_uri");
  if (redirects.some((uri) => chars(uri) > B.uri)) return refusal(`Each redirect URI is at most ${B.uri} characters`, "invalid_redirect_uri");
  for (const key of URI_FIELDS.flatMap((field) => variants(m, field))) if (chars(m[key]) > B.uri) return refusal(`${key} is at most ${B.uri} characters`);
  const contacts = Array.isArray(m.contacts) ? m.contacts : [];
  if (contacts.length > B.contacts || contacts.some((c) => chars(c) > B.contact))
    return refusal(`At most ${B.contacts} contacts, each at most ${B.contact} characters`);
  return undefined;
}

/** How deep registration metadata goes (arrays of strings, at most): anything deeper is never answered again. */
const MAX_DEPTH = 4;

/**
 * JSON with its keys sorted, at every depth: the same metadata, however its sender ordered it. Null past MAX_DEPTH
 * (so a body nested thousands deep costs no recursion: it goes on to the library, which refuses or stores it).
 */
function canonical(value: unknown, depth = 0): string | null {
  if (depth > MAX_DEPTH) return null;
  if (!value || typeof value !== "object") return JSON.stringify(value);
  const entries = Array.isArray(value)
    ? value.map((v) => [null, v] as const)
    : Object.keys(value)
        .sort()
        .map((k) => [k, (value as Record<string, unknown>)[k]] as const);
  const parts: string[] = [];
  for (const [key, v] of entries) {
    const inner = canonical(v, depth + 1);
    if (inner === null) return null;
    parts.push(key === null ? inner : `${JSON.stringify(key)}:${inner}`);
  }
  return Array.isArray(value) ? `[${parts.join(",")}]` : `{${parts.join(",")}}`;
}

/** What a public client's registration answered: its id, and the answer to send again. */
interface Known {
  clientId: string;
  body: string;
}

/**
 * Before the registration limit: a public client's registration identical to one already answered gets that
 * answer again (201, the same client), while the client is stored for longer than a grant lives; it costs the
 * address nothing. Any other registration goes on (to the limit and the library), and a public client's new
 * registration is remembered for the next identical one.
 */
export async function sameRegistration(c: Context<AppEnv>, next: Next) {
  if (c.req.method !== "POST") return next();
  const text = new TextDecoder().decode(await c.req.raw.clone().arrayBuffer());
  // Past the bound it is refused anyway (by the library's callback, `registrationRefusal`).
  if (text.length > B.metadata) return next();
  let metadata: unknown;
  try {
    metadata = JSON.parse(text);
  } catch {
    return next();
  }
  // A confidential client's answer holds its secret, which is stored only hashed: it cannot be answered again.
  if (!metadata || typeof metadata !== "object" || (metadata as Record<string, unknown>).token_endpoint_auth_method !== "none") return next();
  const same = canonical(metadata);
  if (same === null) return next();
  const kv = oauthKv(c.env, c.get("meter"));
  const key = `registration:${await tokenId(same)}`;
  const known = await kv.get<Known>(key, "json");
  if (known) {
    const client = await kv.get<{ registrationExpiresAt?: number }>(`client:${known.clientId}`, "json");
    const left = client?.registrationExpiresAt === undefined ? Number.POSITIVE_INFINITY : client.registrationExpiresAt - Date.now() / 1000;
    if (client && left > GRANT_SECONDS) return libraryJson(known.body, 201, c.req.raw);
  }
  await next();
  if (c.res.status !== 201 || c.error) return;
  const body = await c.res.clone().text();
  const clientId = (JSON.parse(body) as { client_id?: string }).client_id;
  if (clientId) await kv.put(key, JSON.stringify({ clientId, body } satisfies Known), { expirationTtl: GRANT_SECONDS });
}
