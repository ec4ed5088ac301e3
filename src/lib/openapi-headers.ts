/**
 * Headers that middleware adds to every route, written into the generated OpenAPI document once here rather
 * than on each route: Server-Timing and x-d1-bookmark everywhere, ETag / If-None-Match / 304 and the anonymous
 * read limit on GETs, rate-limit headers where a route declares an Idempotency-Key (the routes behind
 * `limitsAndIdempotency()`, which list its `idempotencyParameter`: src/middleware/limits.ts).
 */
// biome-ignore lint/suspicious/noExplicitAny: the generated OpenAPI document is walked as plain JSON.
type Json = Record<string, any>;

const str = { type: "string" };
const int = { type: "integer" };
const ref = (kind: "headers" | "parameters", name: string) => ({ $ref: `#/components/${kind}/${name}` });

const HEADERS: Json = {
  "Server-Timing": {
    description: 'D1 round trips and their time, and each Durable Object called: `d1;desc="1 round trip";dur=0.8, do;desc="BranchRoom";dur=4.2`',
    schema: str,
  },
  "x-d1-bookmark": { description: "D1 session bookmark; send it back as `x-d1-bookmark` to read your own writes", schema: str },
  ETag: { description: "Strong validator of the body; send it back as `If-None-Match`", schema: str },
  "Retry-After": { description: "Seconds until a request would be admitted", schema: int },
  "X-RateLimit-Limit": { description: "The limit of the counter closest to its limit", schema: int },
  "X-RateLimit-Remaining": { description: "Requests left in that counter's window", schema: int },
  "X-RateLimit-Reset": { description: "When that window frees a request (unix seconds)", schema: int },
  "X-Request-Id": {
    description:
      "This request's id: a new UUID, or the request's own `X-Request-Id` when it is 1–255 characters of `[A-Za-z0-9_=-]`; error envelopes repeat it as `error.request_id`",
    schema: str,
  },
  "Idempotent-Replayed": { description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key", schema: str },
};

const PARAMETERS: Json = {
  D1Bookmark: {
    name: "x-d1-bookmark",
    in: "header",
    required: false,
    description: "A bookmark from an earlier response: the read sees at least everything written up to it",
    schema: str,
  },
  IfNoneMatch: { name: "If-None-Match", in: "header", required: false, description: "An ETag from an earlier response: 304 when unchanged", schema: str },
};

const always = {
  "Server-Timing": ref("headers", "Server-Timing"),
  "x-d1-bookmark": ref("headers", "x-d1-bookmark"),
  "X-Request-Id": ref("headers", "X-Request-Id"),
};
const rateHeaders = Object.fromEntries(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"].map((h) => [h, ref("headers", h)]));
const errorContent = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };

/** `GET /branches/{branch_id}/segments` → `getBranchesByBranchIdSegments` (`…/export.epub` → `…ExportEpub`): unique, stable, readable. */
function operationId(method: string, path: string): string {
  const words = path
    .split("/")
    .filter(Boolean)
    .flatMap((part) => (part.startsWith("{") ? `by_${part.slice(1, -1)}` : part).split(/[_.-]/));
  return method + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

/**
 * The live stream (a WebSocket upgrade, `101`) is served before the API's middleware (src/app.ts): no ETag, 304,
 * Server-Timing or bookmark; its request id, and the read limit's 429, are its own.
 */
function describeUpgrade(method: string, path: string, op: Json): void {
  op.operationId ??= operationId(method, path);
  op.security ??= [];
  op.responses["429"] ??= { description: "RATE_LIMIT_EXCEEDED", content: errorContent };
  for (const [status, response] of Object.entries<Json>(op.responses)) {
    response.headers = { ...response.headers, "X-Request-Id": ref("headers", "X-Request-Id") };
    if (status === "429") response.headers["Retry-After"] = ref("headers", "Retry-After");
  }
}

function describeOperation(method: string, path: string, op: Json): void {
  if ("101" in op.responses) {
    describeUpgrade(method, path, op);
    return;
  }
  const guarded = (op.parameters ?? []).some((p: Json) => p.in === "header" && p.name === "idempotency-key");
  op.operationId ??= operationId(method, path);
  op.security ??= []; // public: no credential needed
  if (op.requestBody) op.responses["413"] ??= { description: "PAYLOAD_TOO_LARGE (a body over 1 MiB)", content: errorContent };
  op.parameters = [...(op.parameters ?? []), ref("parameters", "D1Bookmark")];
  if (method === "get") {
    op.parameters.push(ref("parameters", "IfNoneMatch"));
    op.responses["304"] = { description: "Not modified: `If-None-Match` matched the current ETag" };
    op.responses["429"] ??= { description: "RATE_LIMIT_EXCEEDED", content: errorContent };
    op.responses["429"].description += " (without a credential: 600 reads per minute per address)";
  }
  for (const [status, response] of Object.entries<Json>(op.responses)) {
    const headers: Json = { ...response.headers, ...always };
    if (method === "get" && (status === "200" || status === "304")) headers.ETag = ref("headers", "ETag");
    if (status === "429" || (status === "403" && /NOT_YOUR_TURN/.test(response.description))) headers["Retry-After"] = ref("headers", "Retry-After");
    if (guarded && (status.startsWith("2") || status === "429")) Object.assign(headers, rateHeaders);
    if (guarded && status.startsWith("2")) headers["Idempotent-Replayed"] = ref("headers", "Idempotent-Replayed");
    response.headers = headers;
  }
}

export function describeMiddlewareHeaders(doc: Json): Json {
  doc.components = { ...doc.components, headers: { ...doc.components?.headers, ...HEADERS }, parameters: { ...doc.components?.parameters, ...PARAMETERS } };
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) if (op && typeof op === "object" && op.responses) describeOperation(method, path, op);
  }
  return doc;
}
