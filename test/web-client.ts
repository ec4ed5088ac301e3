import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { app } from "../src/app";
import type { Env } from "../src/env";
import { ORIGIN } from "./pages";

/**
 * A browser on the web reader, for the tests of its forms (test/web-moderation.test.ts, test/web-follows.test.ts):
 * pages and form POSTs through the Worker's own fetch, with a session cookie (its value a JWT, as a login sets it).
 */

export { ORIGIN };
/** The session cookie's name on this (non-local) host: `__Host-` prefixed. */
export const COOKIE = "__Host-storyloom_session";

export interface Sent {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

const address = () => `198.51.100.${Math.floor(Math.random() * 250)}`;

/**
 * A form POST as a browser sends it from one of the pages: urlencoded, with this site's Origin (another, or none with
 * `origin: null`), no redirect followed; `env` changes bindings for this one request.
 */
export async function post(
  path: string,
  fields: Record<string, string>,
  options: { session?: string; origin?: string | null; env?: Partial<Env> } = {},
): Promise<Sent> {
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    "CF-Connecting-IP": address(),
    ...(options.origin === null ? {} : { Origin: options.origin ?? ORIGIN }),
    ...(options.session ? { Cookie: `${COOKIE}=${options.session}` } : {}),
  };
  const init: RequestInit = { method: "POST", headers, body: new URLSearchParams(fields), redirect: "manual" };
  let res: Response;
  if (options.env) {
    const ctx = createExecutionContext();
    res = await app.request(`${ORIGIN}${path}`, init, { ...env, ...options.env }, ctx);
    await waitOnExecutionContext(ctx);
  } else res = await exports.default.fetch(`${ORIGIN}${path}`, init);
  return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get("location") };
}

/** A page, signed in with `session` (a JWT) or not, no redirect followed. */
export async function get(path: string, session?: string): Promise<Sent> {
  const headers: Record<string, string> = { "CF-Connecting-IP": address(), ...(session ? { Cookie: `${COOKIE}=${session}` } : {}) };
  const res = await exports.default.fetch(`${ORIGIN}${path}`, { headers, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get("location") };
}
