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

/** Counts requests whose answer `counts` accepts; refuses with 429 and Retry-After once a subject is at its limit. */
export function limitBySubject(limits: SubjectLimit[], counts: (status: number) => boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const admitted: { gate: DurableObjectStub<AccountGate>; reservation: string; keys: string[] }[] = [];
    const release = () => Promise.all(admitted.map((a) => a.gate.settle(null, a.reservation, { counted: false, response: null, keys: [] })));
    for (const limit of limits) {
      const subject = await limit.subject(c);
      if (!subject) continue;
      const counters = limit.counters(c.get("config").limits, c);
      const gate = c.env.ACCOUNT_GATE.get(c.env.ACCOUNT_GATE.idFromName(subject)) as DurableObjectStub<AccountGate>;
      const admission = await c.get("meter").timeObject("AccountGate", async (): Promise<Admission> => await gate.admit(null, counters));
      if (admission.kind === "limited") {
        await release();
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
export function limitAfterFailures(limit: SubjectLimit, failedNow: (status: number, c: Context<AppEnv>) => boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const subject = await limit.subject(c);
    if (!subject) return next();
    const counters = limit.counters(c.get("config").limits, c);
    const remembered = `${subject} ${counters.map((k) => k.key).join(" ")}`;
    const known = refusedHere.get(remembered);
    if (known && known.until > Date.now()) throw limitError({ ...known, retryAfter: Math.max(1, Math.ceil((known.until - Date.now()) / 1000)) });
    await next();
    if (failedNow(c.res.status, c)) await inBackground(c, countFailure(c, subject, counters, remembered));
  };
}

/** Counts one failure in the subject's gate; remembers the refusal once the gate says the limit is reached. */
async function countFailure(c: Context<AppEnv>, subject: string, counters: Counter[], remembered: string) {
  const gate = c.env.ACCOUNT_GATE.get(c.env.ACCOUNT_GATE.idFromName(subject)) as DurableObjectStub<AccountGate>;
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
 * Failed OAuth requests per client address (a junk code or refresh token, an unknown client, a refused consent):
 * each cost a KV read and, on its miss, one of D1's primary (src/oauth/consistent-kv.ts). Asked first, as failed
 * logins are: the right request waits too once an address is over.
 */
export const oauthFailureLimit = limitBySubject([oauthFailures], failed);

/**
 * The same failures on `/mcp`: a bearer with a `:` (an OAuth token's shape) that is refused 401. Counted after the
 * answer (`limitAfterFailures`), as a gate asked first would cost every OAuth call a trip. A genuine token whose
 * account's standing is refused (a retired bot's, a suspended person's) is no guess: its 401 is not counted, or one
 * person's ended grant, called on by a host that serves many from one address, would lock all of them out.
 */
export const mcpTokenFailureLimit = limitAfterFailures(
  { ...oauthFailures, subject: (c) => ((c.req.header("authorization") ?? c.req.header("x-api-key") ?? "").includes(":") ? address(c) : null) },
  (status, c) => status === 401 && !c.get("standing")?.refused,
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
