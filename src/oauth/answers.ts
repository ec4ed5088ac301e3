/**
 * A JSON answer of ours from the library's endpoints (a replayed token or registration answer), with the headers
 * the library puts on its own: never cached, and readable by a browser-based client (the CORS headers it adds to
 * every answer of a request with an `Origin`).
 */
export function libraryJson(body: string, status: number, request: Request): Response {
  const headers = new Headers({ "Content-Type": "application/json", "Cache-Control": "no-store", Pragma: "no-cache" });
  const origin = request.headers.get("Origin");
  if (origin) {
    headers.set("Access-Control-Allow-Origin", origin);
    headers.set("Access-Control-Allow-Methods", "*");
    headers.set("Access-Control-Allow-Headers", "Authorization, *");
    headers.set("Access-Control-Max-Age", "86400");
    headers.set("Access-Control-Expose-Headers", "WWW-Authenticate, Retry-After");
    headers.set("Vary", "Origin");
  }
  return new Response(body, { status, headers });
}
