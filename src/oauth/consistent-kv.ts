import { meteredD1 } from "../db/metered";
import type { Env } from "../env";
import type { D1Counter } from "../lib/meter";

/**
 * `OAUTH_KV` as the OAuth library sees it. Workers KV is eventually consistent: a key written in one
 * location is read as missing in another for up to about a minute (and that miss is itself cached there). A host
 * whose browser approved in one place and whose backend exchanges the code, or calls `/mcp` with the fresh token,
 * from another would be told `invalid_grant` or `401 invalid_token` — and treat the connection as broken.
 *
 * So every write the library makes also goes to D1 (`oauth_kv`) for MIRROR_SECONDS, and a KV miss is asked of D1's
 * primary before it is believed. A hit costs what it cost (one KV read); only a miss adds a D1 read, and writes
 * happen only in the OAuth flows (authorization, token, refresh, registration), never on an API request.
 */

/** Longer than KV's propagation window (about 60 s), so a miss after it is KV's true answer. */
export const MIRROR_SECONDS = 300;

type GetType = "text" | "json" | "arrayBuffer" | "stream";
const typeOf = (options: unknown): GetType =>
  typeof options === "string" ? (options as GetType) : ((options as { type?: GetType } | undefined)?.type ?? "text");

function decoded(value: string, type: GetType): unknown {
  if (type === "json") return JSON.parse(value);
  if (type === "arrayBuffer") return new TextEncoder().encode(value).buffer;
  if (type === "stream") return new Response(value).body;
  return value;
}

/** KV's longest key, in UTF-8 bytes: it refuses a longer one (it throws) rather than missing it. */
const MAX_KEY_BYTES = 512;
const encoder = new TextEncoder();
/** A key KV cannot hold, so nothing was ever stored under it (a UTF-16 unit is at most 3 UTF-8 bytes: short keys skip the count). */
const tooLong = (key: string) => key.length > MAX_KEY_BYTES / 3 && encoder.encode(key).byteLength > MAX_KEY_BYTES;

/**
 * `kv` as the library reads and writes it, with D1's primary (`primary`, the request's metered session there: its
 * reads count in Server-Timing) behind every miss. A key longer than KV's limit (part of a token or client id a
 * client sent) is a miss, and deleting it nothing; only writing one, which our flows never do, still throws.
 */
export function consistentKv(kv: KVNamespace, primary: Pick<D1Database, "prepare">, now = () => Date.now()): KVNamespace {
  const mirrored = async (key: string): Promise<string | null> => {
    const row = await primary
      .prepare("SELECT value FROM oauth_kv WHERE key = ? AND expires_at > ?")
      .bind(key, new Date(now()).toISOString())
      .first<{ value: string }>();
    return row?.value ?? null;
  };
  const wrapper = {
    async get(key: string, options?: unknown) {
      if (tooLong(key)) return null;
      const value = await kv.get(key, options as never);
      if (value !== null) return value;
      const stored = await mirrored(key);
      return stored === null ? null : decoded(stored, typeOf(options));
    },
    async put(key: string, value: string | ArrayBuffer | ArrayBufferView | ReadableStream, options?: KVNamespacePutOptions) {
      const text = typeof value === "string" ? value : await new Response(value as BodyInit).text();
      await kv.put(key, text, options);
      const ttl = options?.expirationTtl ?? (options?.expiration ? options.expiration - now() / 1000 : MIRROR_SECONDS);
      const expires = new Date(now() + Math.min(MIRROR_SECONDS, ttl) * 1000).toISOString();
      await primary
        .prepare(
          "INSERT INTO oauth_kv (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at",
        )
        .bind(key, text, expires)
        .run();
    },
    async delete(key: string) {
      if (tooLong(key)) return;
      await kv.delete(key);
      await primary.prepare("DELETE FROM oauth_kv WHERE key = ?").bind(key).run();
    },
    list: (options?: KVNamespaceListOptions) =>
      tooLong(options?.prefix ?? "") ? Promise.resolve({ keys: [], list_complete: true, cacheStatus: null }) : kv.list(options),
    getWithMetadata: (key: string, options?: unknown) =>
      tooLong(key) ? Promise.resolve({ value: null, metadata: null, cacheStatus: null }) : kv.getWithMetadata(key, options as never),
  };
  return wrapper as unknown as KVNamespace;
}

/** `OAUTH_KV` for one request: D1's primary behind every miss, in a session opened on first use and metered as the request's. */
export const oauthKv = (env: Env, meter: D1Counter) =>
  consistentKv(
    env.OAUTH_KV,
    meteredD1(() => env.DB.withSession("first-primary"), meter),
  );
