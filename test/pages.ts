import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { app } from "../src/app";
import type { Env } from "../src/env";
import { address, searchable } from "./helpers";

/**
 * The web reader as the tests fetch and read it: pages and form POSTs through the Worker's own fetch, as a browser
 * sends them, with a session cookie (its value a JWT, as a login sets it) or none. Every test file uses these.
 */

/** The address tests call the Worker at (vitest.config.ts' PUBLIC_ORIGIN). */
export const ORIGIN = "https://storyloom.test";
/** The session cookie's name on this (non-local) host: `__Host-` prefixed; on localhost it is `storyloom_session`. */
export const COOKIE = "__Host-storyloom_session";
/** An anonymous reader's preferences cookie. */
export const PREFS = "__Host-storyloom_prefs";

export interface Page {
  status: number;
  headers: Headers;
  text: string;
  /** The Location header (redirects are not followed by `get` and `post`). */
  location: string | null;
}
/** What a form POST got back. */
export type Sent = Page;

export interface Visit {
  /** The session token (the session cookie's value). */
  session?: string;
  /** The preferences cookie's value. */
  prefs?: string;
  /** More request headers (they win over the ones made here). */
  headers?: Record<string, string>;
  /** Bindings changed for this one request (served by the app itself, with the rest of the real env). */
  env?: Partial<Env>;
  /** A form POST's Origin header; `null` sends none. Default: this site. */
  origin?: string | null;
  /** The site's own address (default ORIGIN), e.g. http://localhost:8787. */
  site?: string;
}

const visitOf = (v: string | Visit | undefined): Visit => (typeof v === "string" ? { session: v } : (v ?? {}));

async function send(path: string, init: RequestInit & { headers: Record<string, string> }, v: Visit): Promise<Page> {
  const url = `${v.site ?? ORIGIN}${path}`;
  const cookie = [v.session ? `${COOKIE}=${v.session}` : "", v.prefs ? `${PREFS}=${v.prefs}` : ""].filter(Boolean).join("; ");
  const headers = { "CF-Connecting-IP": address(), ...(cookie ? { Cookie: cookie } : {}), ...init.headers, ...v.headers };
  const request = { ...init, headers };
  let res: Response;
  if (v.env) {
    const ctx = createExecutionContext();
    res = await app.request(url, request, { ...env, ...v.env }, ctx);
    await waitOnExecutionContext(ctx);
  } else res = await exports.default.fetch(url, request);
  return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get("location") };
}

/** A page, signed in with a session (a JWT, or `{ session, prefs, env, … }`) or not, no redirect followed. */
/** A page as a browser asks for it; the search page once the writes before it reached the search shards (`searchable`). */
export async function get(path: string, visit?: string | Visit) {
  if (path.startsWith("/search?")) await searchable();
  return send(path, { headers: {}, redirect: "manual" }, visitOf(visit));
}

/**
 * A form POST as a browser sends it from one of the pages: urlencoded, with this site's Origin (another, or none with
 * `origin: null`), no redirect followed.
 */
export function post(path: string, fields: Record<string, string>, visit?: string | Visit): Promise<Sent> {
  const v = visitOf(visit);
  const origin: Record<string, string> = v.origin === null ? {} : { Origin: v.origin ?? v.site ?? ORIGIN };
  const headers = { "content-type": "application/x-www-form-urlencoded", ...origin };
  return send(path, { method: "POST", headers, body: new URLSearchParams(fields), redirect: "manual" }, v);
}

/** A page of the web reader, fetched as a browser asks for it (no credential, Accept: text/html). */
export const page = (path: string, headers: Record<string, string> = {}) => send(path, { headers: { Accept: "text/html", ...headers } }, {});

/**
 * The text of a response that must have this status (200 unless told): what a page must not show is only worth
 * checking on the page itself, since an error page shows none of it either.
 */
export function shown(res: { status: number; text: string }, status = 200) {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  return res.text;
}

/** The D1 round trips a response's `Server-Timing` reports (it must report them). */
export const trips = (res: { status: number; headers: Headers }) => {
  const m = /d1;desc="(\d+) round trips?"/.exec(res.headers.get("server-timing") ?? "");
  if (!m) throw new Error(`no d1 Server-Timing on ${res.status}`);
  return Number(m[1]);
};

/** What a reader sees of some markup: its text with the tags removed, the entities decoded and the spaces collapsed. */
export const visible = (html: string) =>
  html
    .replace(/<[^>]*>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
