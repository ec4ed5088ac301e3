import { addressKey } from "../lib/address";
import type { Context, MiddlewareHandler } from "hono";
import type { Config } from "../config";
import type { AppEnv } from "../context";
import type { AccountGate, Admission, Counter } from "../durable/account";
import { succeeded } from "../lib/envelope";
import { isFormBody } from "../lib/form-body";
import { type Refusal, limitError } from "../lib/limit-error";
import { nameKey } from "../lib/names";
import { inBackground } from "./background";

/**
 * Limits on something other than the caller's account, each counted in the gate object named by its subject
 * (a client address, the account a login names, a branch): registrations per address, failed logins per
 * address, per account and address, and per account, summary regenerations per branch. A subject's counters
 * are admitted together, in one call to its gate. A subject of null skips its limits.
 */
export interface SubjectLimit {
  subject: (c: Context<AppEnv>) => Promise<string | null> | string | null;
  counters: (limits: Config["limits"], c: Context<AppEnv>) => Counter[];
}

const HOUR = 3600_000;
const hourly = (key: string, limit: number): Counter => ({ key, limit, windowMs: HOUR, label: `${limit} per hour`, code: "RATE_LIMIT_EXCEEDED" });

/**
 * Counts requests whose answer `counts` accepts; refuses with 429 and Retry-After once a subject is at its limit,
 * unless `spared` says the request is one no limit may refuse (then it is served and counts nothing).
 */
export function limitBySubject(
  limits: SubjectLimit[],
  counts: (status: number) => boolean,
  spared?: (c: Context<AppEnv>) => Promise<boolean>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const admitted: { gate: DurableObjectStub<AccountGate>; reservation: string; keys: string[] }[] = [];
    const release = () => Promise.all(admitted.map((a) => a.gate.settle(null, a.reservation, { counted: false, response: null, keys: [] })));
    for (const limit of limits) {
      const subject = await limit.subject(c);
      if (!subject) continue;
      const counters = limit.counters(c.get("config").limits, c);
      const gate = c.env.ACCOUNT_GATE.get(c.env.ACCOUNT_GATE.idFromName(subject));
      const admission = await c.get("meter").timeObject("AccountGate", async (): Promise<Admission> => await gate.admit(null, counters));
      if (admission.kind === "limited") {
        await release();
        if (spared && (await spared(c))) return next();
        throw limitError(admission);
      }
      if (admission.kind === "proceed") admitted.push({ gate, reservation: admission.reservation, keys: counters.map((k) => k.key) });
    }
    await next();
    const counted = counts(c.res.status);
    const settled = Promise.all(admitted.map((a) => a.gate.settle(null, a.reservation, { counted, response: null, keys: a.keys })));
    await inBackground(c, settled);
  };
}

/** Refusals a gate answered to this isolate (`limitAfterFailures`), by subject and counters, until they end. */
const refusedHere = new Map<string, Refusal & { until: number }>();

/**
 * A limit on failures for a path too hot to ask a gate before each request: a request whose answer `failedNow`
 * calls a failure is counted in its subject's gate after the answer (in the background). When that count reaches
 * the limit, the isolate keeps the refusal and answers the subject's next requests 429 at once, with no look-up,
 * until the oldest failure leaves the window. Another isolate learns it on the subject's next failure there.
 */
export function limitAfterFailures(
  limit: SubjectLimit,
  failedNow: (status: number, c: Context<AppEnv>) => boolean,
  spared?: (c: Context<AppEnv>) => Promise<boolean>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const subject = await limit.subject(c);
    if (!subject) return next();
    const counters = limit.counters(c.get("config").limits, c);
    const remembered = `${subject} ${counters.map((k) => k.key).join(" ")}`;
    const known = refusedHere.get(remembered);
    if (known && known.until > Date.now()) {
      // A request `spared` says no limit may refuse is served (and, failing, counts nothing).
      if (spared && (await spared(c))) return next();
      throw limitError({ ...known, retryAfter: Math.max(1, Math.ceil((known.until - Date.now()) / 1000)) });
    }
    await next();
    if (!failedNow(c.res.status, c)) return;
    const count = async () => {
      if (!(spared && (await spared(c)))) await countFailure(c, subject, counters, remembered);
    };
    await inBackground(c, count());
  };
}

/** Counts one failure in the subject's gate; remembers the refusal once the gate says the limit is reached. */
async function countFailure(c: Context<AppEnv>, subject: string, counters: Counter[], remembered: string) {
  const gate = c.env.ACCOUNT_GATE.get(c.env.ACCOUNT_GATE.idFromName(subject));
  const admission = await gate.admit(null, counters);
  if (admission.kind === "proceed") await gate.settle(null, admission.reservation, { counted: true, response: null, keys: counters.map((k) => k.key) });
  const rate = admission.kind === "limited" ? admission.rate : admission.kind === "proceed" ? admission.rate : null;
  if (!rate || rate.remaining > 0) return;
  const counter = counters.find((k) => k.limit === rate.limit) ?? counters[0];
  if (refusedHere.size >= 10_000) refusedHere.clear();
  refusedHere.set(remembered, { code: counter.code, label: counter.label, retryAfter: 0, rate, until: rate.reset * 1000 });
}

/** The client address the per-address counters key on: IPv6 by its /64 (src/lib/address.ts), as the read limit counts. */
const address = (c: Context<AppEnv>) => `address:${addressKey(c.req.header("cf-connecting-ip"))}`;

/** The login name a request body tries (an email or a bot name), as its uniqueness key; null when absent. */
const loginName = (field: string) => async (c: Context<AppEnv>) => {
  // A JSON body from the API, a form from the web reader's login page.
  const body = await (isFormBody(c.req.header("content-type")) ? c.req.parseBody() : c.req.json()).catch(() => null);
  const value = body && typeof body === "object" ? (body as Record<string, unknown>)[field] : undefined;
  return typeof value === "string" && value ? `login:${field}:${nameKey(value)}` : null;
};

const regenerates = (c: Context<AppEnv>) => c.req.method === "POST" || /^(true|1)$/i.test(c.req.query("force_refresh") ?? "");

/**
 * Summary regenerations (each may be a paid provider call): per account (admins exempt) and per branch.
 * Runs after `auth()`; a GET without force_refresh regenerates nothing and is not limited.
 */
export const summaryLimit = limitBySubject(
  [
    {
      subject: (c) => {
        const actor = c.get("actor");
        return regenerates(c) && actor && actor.type !== "admin" ? actor.id : null;
      },
      counters: (l) => [hourly("summary", l.summariesPerHour)],
    },
    {
      subject: (c) => (regenerates(c) ? `branch:${c.req.param("branch_id")?.toLowerCase()}` : null),
      counters: (l) => [hourly("summary", l.summariesPerBranchPerHour)],
    },
  ],
  (status) => status < 300,
);

/**
 * Registrations (humans and bots) per client address, for a request that `registers` (a form that may or may not
 * make a bot says which), counted when `counts` says one was made.
 */
export const registrationLimitWhen = (registers: (c: Context<AppEnv>) => Promise<boolean>, counts: (status: number) => boolean) =>
  limitBySubject(
    [{ subject: async (c) => ((await registers(c)) ? address(c) : null), counters: (l) => [hourly("register", l.registrationsPerAddressPerHour)] }],
    counts,
  );

/** Registrations (humans and bots) per client address. */
export const registrationLimit = registrationLimitWhen(async () => true, succeeded);

/** The client address of a POST (what the OAuth endpoints' limits count; their metadata and preflights are free). */
const posting = (c: Context<AppEnv>) => (c.req.method === "POST" ? address(c) : null);
const failed = (status: number) => status >= 400 && status < 500;
const oauthFailures: SubjectLimit = { subject: posting, counters: (l) => [hourly("oauth-failure", l.oauthFailuresPerAddressPerHour)] };

/** OAuth clients registered (DCR) per client address: each is stored (KV, and D1 for KV's window). */
export const oauthRegistrationLimit = limitBySubject(
  [{ subject: posting, counters: (l) => [hourly("oauth-register", l.oauthRegistrationsPerAddressPerHour)] }],
  succeeded,
);

/**
 * Failed OAuth requests per client address (a refused consent): each cost a KV read and, on its miss, one of D1's
 * primary (src/oauth/consistent-kv.ts). Asked first, as failed logins are: the right request waits too once an
 * address is over.
 */
export const oauthFailureLimit = limitBySubject([oauthFailures], failed);

/** The client a token request names: its HTTP Basic credentials' id, else its `client_id` field ("" for none). */
function tokenClient(c: Context<AppEnv>, form: URLSearchParams): string {
  const basic = /^Basic\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
  let id = form.get("client_id") ?? "";
  if (basic) {
    try {
      const user = atob(basic).split(":")[0] ?? "";
      id = decodeURIComponent(user.replace(/\+/g, " "));
    } catch {
      id = "";
    }
  }
  // A client id is a short random string or a metadata document's URL; anything longer counts under its start.
  return id.slice(0, 256);
}

/**
 * Failed token requests (a junk code or refresh token, an unknown client, a wrong secret or verifier), each a KV
 * read and, on its miss, one of D1's primary: in the address's gate, per client id there, and a far higher backstop
 * over every client id (ids are the caller's to choose). Asked first; at a limit, a request that names a live grant
 * (the grant's unused code, its current refresh token) is still served, and counts nothing: a hosted assistant's
 * backend calls for many people from one address, and anyone can make it exchange junk (`?code=junk` on its
 * callback), which must not lock out the people whose grants are good.
 */
export const oauthTokenLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method !== "POST") return next();
  const form = new URLSearchParams(new TextDecoder().decode(await c.req.raw.clone().arrayBuffer()));
  const client = tokenClient(c, form);
  const failures: SubjectLimit = {
    subject: address,
    counters: (l) => [
      hourly(`oauth-token-failure:${client}`, l.oauthTokenFailuresPerClientAddressPerHour),
      hourly("oauth-token-failure", l.oauthTokenFailuresPerAddressPerHour),
    ],
  };
  const live = async () => (await import("../oauth/live-grant")).namesLiveGrant(c.env, c.get("meter"), form);
  return limitBySubject([failures], failed, live)(c, next);
};

/** The credential a `/mcp` call carries: its bearer, or its `X-API-Key`. */
const credentialOf = (c: Context<AppEnv>) => (c.req.header("authorization") ?? "").replace(/^Bearer\s+/i, "") || (c.req.header("x-api-key") ?? "");

/**
 * The same failures on `/mcp`: a bearer with a `:` (an OAuth token's shape) that is refused 401. Counted after the
 * answer (`limitAfterFailures`), as a gate asked first would cost every OAuth call a trip. A bearer of a live grant
 * (an access token that expired, which a host sends before it refreshes) is neither counted nor refused, and a genuine
 * token whose account's standing is refused (a retired bot's, a suspended person's) is no guess: its 401 is not
 * counted. A hosted assistant calls for many people from one address; one person's tokens must not lock out the rest.
 */
export const mcpTokenFailureLimit = limitAfterFailures(
  { ...oauthFailures, subject: (c) => (credentialOf(c).includes(":") ? address(c) : null) },
  (status, c) => status === 401 && !c.get("standing")?.refused,
  async (c) => (await import("../oauth/live-grant")).bearerOfLiveGrant(c.env, c.get("meter"), credentialOf(c)),
);

/**
 * Failures against the account a login names, in its gate: per client address (a stranger's guesses lock out
 * that stranger, not the owner elsewhere) and, a far higher backstop, in all (guesses spread over many addresses).
 */
const accountFailures = (l: Config["limits"], c: Context<AppEnv>) => [
  hourly(`login-failure:${address(c)}`, l.loginFailuresPerAccountAddressPerHour),
  hourly("login-failure", l.loginFailuresPerAccountPerHour),
];

/** Failed logins (a 401: wrong password, API key or master key) per client address and, where the body names one, per account. */
export const failedLoginLimit = (accountField?: string) =>
  limitBySubject(
    [
      { subject: address, counters: (l) => [hourly("login-failure", l.loginFailuresPerAddressPerHour)] },
      ...(accountField ? [{ subject: loginName(accountField), counters: accountFailures }] : []),
    ],
    (status) => status === 401,
  );
