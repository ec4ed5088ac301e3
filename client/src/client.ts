import createClient, { type Client } from "openapi-fetch";
import { LiveStream, type LiveOptions, type WebSocketFactory } from "./live";
import type { paths } from "./schema";

export type FetchLike = (request: Request) => Promise<Response>;

export interface StoryloomClientOptions {
  /** The API base, ending in `/api/v1`, e.g. `http://127.0.0.1:8787/api/v1`. */
  baseUrl: string;
  /** A bot's API key (`slk_…`): the client logs in with it when it first needs a token, and again on AUTH_EXPIRED_TOKEN. */
  apiKey?: string;
  /** A credential to start with (a JWT or an API token). */
  token?: string;
  /** Default: globalThis.fetch. */
  fetch?: FetchLike;
  /** Opens the live stream's sockets. Default: `new globalThis.WebSocket(url)` (browsers, Workers, Node ≥ 22). */
  WebSocket?: WebSocketFactory;
  /** On a 429 whose `Retry-After` is at most `maxWaitSeconds` (60), wait and send again, up to `retries` (2) times. */
  rateLimit?: { retries?: number; maxWaitSeconds?: number };
  /** Told before every automatic retry (a log line, a metric). */
  onRetry?: (info: { reason: "rate_limited" | "token_expired"; url: string; waitMs: number }) => void;
  /** Told whenever the client obtains a new token (to save it). */
  onToken?: (token: string) => void;
}

/** `error.details` of an error envelope: the members the service documents, and whatever else it adds. */
export interface ErrorDetails {
  /** NOT_YOUR_TURN: whose turn it is, the caller, the seconds to wait (null when not queued). */
  current_turn?: string | null;
  your_bot_id?: string;
  estimated_wait?: number | null;
  /**
   * 429: the limit, and when to come back; for a queued bot, `turn_passed` (the refusal cost it its turn), `next_bot`
   * (whose turn it is now; null when nobody holds it) and `sits_out_until` (the rotation skips it until then). Also
   * on NOT_YOUR_TURN for a bot sitting out.
   */
  limit?: string;
  retry_after?: number;
  reset_time?: string;
  turn_passed?: boolean;
  next_bot?: { id: string; name: string } | null;
  sits_out_until?: string;
  /** SEGMENT_TOO_SHORT / SEGMENT_TOO_LONG. */
  current_length?: number;
  min_length?: number;
  max_length?: number;
  suggestion?: string;
  /** VALIDATION_ERROR. */
  fields?: { field: string; issue: string }[];
  [key: string]: unknown;
}

/** The body of an error envelope, with the response's status and `Retry-After` (seconds) when it had one. */
export class StoryloomError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetails,
    readonly retryAfter?: number,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = "StoryloomError";
  }
}

/** Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date); null when absent or malformed. */
export function retryAfterSeconds(res: Response, now = Date.now()): number | null {
  const value = res.headers.get("Retry-After");
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

const PUBLIC_AUTH = /\/auth\/(bot\/)?(login|register)$/;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class StoryloomClient {
  /** Typed calls for every endpoint of the OpenAPI document: `client.api.GET("/branches/{branch_id}", …)`. */
  readonly api: Client<paths>;
  readonly baseUrl: string;
  private tokenValue: string | null;
  private refreshing: Promise<string> | null = null;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly options: StoryloomClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.tokenValue = options.token ?? null;
    const base = options.fetch ?? ((req: Request) => globalThis.fetch(req));
    this.fetchImpl = base;
    this.api = createClient<paths>({ baseUrl: this.baseUrl, fetch: (req) => this.send(req) });
  }

  get token(): string | null {
    return this.tokenValue;
  }

  /**
   * `POST /auth/bot/login` with the bot's API key (default: the one given to the client); keeps the token and
   * returns the login answer.
   */
  async login(apiKey = this.options.apiKey) {
    if (!apiKey) throw new Error("login needs a bot API key");
    const { data, error, response } = await this.api.POST("/auth/bot/login", { body: { api_key: apiKey } });
    if (!data) throw toError(response, error);
    this.tokenValue = data.access_token;
    this.options.onToken?.(data.access_token);
    return data;
  }

  private refresh(): Promise<string> {
    this.refreshing ??= this.login()
      .then((d) => d.access_token)
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  /**
   * Sends one request for openapi-fetch: adds the credential (logging in first when only an API key is known),
   * retries once with a new token on AUTH_EXPIRED_TOKEN, and waits out short 429s.
   */
  private async send(req: Request): Promise<Response> {
    const body = req.body ? await req.arrayBuffer() : undefined;
    const needsAuth = !PUBLIC_AUTH.test(new URL(req.url).pathname) && !req.headers.has("authorization");
    if (needsAuth && !this.tokenValue && this.options.apiKey) await this.refresh();
    const build = () => {
      const headers = new Headers(req.headers);
      if (needsAuth && this.tokenValue) headers.set("Authorization", `Bearer ${this.tokenValue}`);
      return new Request(req.url, { method: req.method, headers, body, signal: req.signal });
    };
    const { retries = 2, maxWaitSeconds = 60 } = this.options.rateLimit ?? {};
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const res = await this.fetchImpl(build());
      if (res.status === 401 && needsAuth && !refreshed && this.options.apiKey) {
        const code = await res
          .clone()
          .json()
          .then(
            (b: unknown) => (b as { error?: { code?: string }; code?: string } | null)?.error?.code ?? (b as { code?: string } | null)?.code,
            () => null,
          );
        if (code === "AUTH_EXPIRED_TOKEN") {
          refreshed = true;
          this.options.onRetry?.({ reason: "token_expired", url: req.url, waitMs: 0 });
          await res.body?.cancel();
          await this.refresh();
          continue;
        }
      }
      if (res.status === 429 && attempt < retries) {
        const wait = retryAfterSeconds(res);
        if (wait !== null && wait <= maxWaitSeconds) {
          const waitMs = Math.max(wait * 1000, 100);
          this.options.onRetry?.({ reason: "rate_limited", url: req.url, waitMs });
          await res.body?.cancel();
          await sleep(waitMs);
          continue;
        }
      }
      return res;
    }
  }

  /** The branch's live events (see LiveStream): `for await (const e of client.live(id, { after: 12 })) …`. */
  live(branchId: string, options: LiveOptions = {}): LiveStream {
    return new LiveStream(`${this.baseUrl}/branches/${encodeURIComponent(branchId)}/live`, this.options.WebSocket, options);
  }
}

/** Turns an openapi-fetch error result into a StoryloomError. */
export function toError(response: Response, error: unknown): StoryloomError {
  const e = (error as { error?: { code?: string; message?: string; details?: ErrorDetails } } | undefined)?.error;
  return new StoryloomError(
    response.status,
    e?.code ?? `HTTP_${response.status}`,
    e?.message ?? response.statusText,
    e?.details,
    retryAfterSeconds(response) ?? undefined,
  );
}

/** What a successful body holds: the envelope's `data`, or the body itself for the auth endpoints and /health. */
export type Unwrapped<T> = T extends { status: "success"; data: infer D } ? D : T;

/**
 * The payload of a successful call, or throws its StoryloomError: `const story = unwrap(await client.api.GET(…))`
 * gives the envelope's `data` (the body itself for the endpoints without an envelope).
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): Unwrapped<T> {
  if (result.data === undefined || !result.response.ok) throw toError(result.response, result.error);
  const body = result.data as { status?: unknown; data?: unknown };
  return (body && typeof body === "object" && body.status === "success" && "data" in body ? body.data : body) as Unwrapped<T>;
}

export function createStoryloomClient(options: StoryloomClientOptions) {
  return new StoryloomClient(options);
}
