const HERE = "http://storyloom.invalid";

/** White space, control characters and the backslash (which browsers read as a slash). */
const unsafe = (ch: string) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f || ch === "\\";

/** A path-absolute reference a browser cannot read as another host: `/` then anything but `/` or `\`. */
const ownPath = /^\/(?![/\\])/;

/**
 * `next` resolved as a browser resolves a `Location` (dot segments, `%2e`, backslashes as slashes), as
 * path + query + fragment on this site; null when it is not one, or when the result would start with `//` or `/\`.
 */
function resolve(next: string): string | null {
  if (!ownPath.test(next) || [...next].some(unsafe) || !URL.canParse(next, HERE)) return null;
  const url = new URL(next, HERE);
  const path = `${url.pathname}${url.search}${url.hash}`;
  return url.origin === HERE && ownPath.test(path) ? path : null;
}

/**
 * Where to go after signing in: a path on this site only, else the home page. Never `//host`, `/\host`, a scheme,
 * or anything with white space or control characters (browsers drop tabs and newlines from a URL, so `/\t/host`
 * would be `//host`; a newline would also be refused as a header value); never a path whose dot segments resolve
 * to `//host` (`/.//host`, `/%2e//host`, `/a/..//host`). Only a fixed point of the resolution is returned, so
 * applying it twice changes nothing.
 */
export function safeNext(next: string | undefined): string {
  const path = next === undefined ? null : resolve(next);
  return path !== null && resolve(path) === path ? path : "/";
}
