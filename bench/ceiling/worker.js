// The local ceilings: the smallest Workers that do what a Storyloom request must, under the same `wrangler dev`
// and deployed the same way (static assets in front, `/api/v1/*` to the Worker first). With LOG = "true" each
// request writes one JSON line of the same shape as Storyloom's access log.
//   GET  /api/v1/            answers at once (a cached read's ceiling); `?bytes=N` pads the JSON answer to about N
//                            bytes, so a read is compared with a ceiling that sends as much (the platform's cost of
//                            moving a body is not the Worker's code)
//   GET  /api/v1/d1/{name}   a read that reaches D1: runs the statements `READS` names (the SQL text and binds of
//                            Storyloom's own read, bench/d1-reads.ts) through raw D1, over a copy of Storyloom's
//                            database (the same rows, the same bytes), and answers their rows as JSON
//   PUT  /api/v1/copy        keeps the request's body and content type (the bench sends it a page or feed it probed);
//   GET  /{any path}?copy    then answers those very bytes with that type: a page's or feed's ceiling, reached at a
//                            path that is no `/api/v1/*` one, so it passes the static-asset look-up a page passes, and
//                            moves the same HTML through what `wrangler dev` puts in front of every HTML answer (its
//                            proxy runs each through HTMLRewriter for live reload: a dev-only cost both pay alike)
//   POST /api/v1/write       one RPC to a SQLite-backed Durable Object that runs one D1 batch of two statements
//                            (insert a row, bump a counter) in a database of its own (`WRITES`): a segment write's
//                            ceiling
import { DurableObject } from "cloudflare:workers";
import { BUMP_COUNTER, CEILING_TABLES, INSERT_ROW } from "./statements.js";

let tables = null;
const ensureTables = (db) => (tables ??= db.batch(CEILING_TABLES.map((sql) => db.prepare(sql))));

export class Room extends DurableObject {
  async write(branch, body) {
    const db = this.env.WRITES;
    await ensureTables(db);
    const id = crypto.randomUUID();
    await db.batch([db.prepare(INSERT_ROW).bind(id, branch, body), db.prepare(BUMP_COUNTER).bind(branch)]);
    return { id };
  }
}

let reads = null;
/** `READS` (`{ name: [{ sql, params }] }`), parsed once per isolate. */
const readsOf = (env) => (reads ??= JSON.parse(env.READS ?? "{}"));

/** The rows of a named read: one statement's, or a batch's (each statement's) in one round trip. */
async function rowsOf(env, statements) {
  if (statements.length === 1)
    return (
      await env.DB.prepare(statements[0].sql)
        .bind(...statements[0].params)
        .all()
    ).results;
  return (await env.DB.batch(statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)))).map((r) => r.results);
}

const bodies = new Map();
/** `{"status":"success","data":{"ok":true,"pad":"…"}}`, about `bytes` long; made once per size. */
function padded(bytes) {
  let body = bodies.get(bytes);
  if (!body) {
    const bare = JSON.stringify({ status: "success", data: { ok: true, pad: "" } });
    body = JSON.stringify({ status: "success", data: { ok: true, pad: "x".repeat(Math.max(0, bytes - bare.length)) } });
    bodies.set(bytes, body);
  }
  return body;
}
/** The body `PUT /api/v1/copy` kept, with its content type (one isolate under `wrangler dev`). */
let copy = null;

const json = (body, status = 200) => new Response(body, { status, headers: { "content-type": "application/json" } });

async function answer(request, env) {
  const url = new URL(request.url);
  if (url.pathname.startsWith("/api/v1/d1/")) {
    const statements = readsOf(env)[url.pathname.slice("/api/v1/d1/".length)];
    if (!statements) return [json(JSON.stringify({ status: "error", error: { code: "NOT_FOUND", message: "no such read in READS" } }), 404), 0];
    return [json(JSON.stringify({ status: "success", data: await rowsOf(env, statements) })), 1];
  }
  if (url.pathname === "/api/v1/write" && request.method === "POST") {
    const { branch, content } = await request.json();
    const room = env.ROOM.get(env.ROOM.idFromName(branch));
    return [Response.json({ status: "success", data: await room.write(branch, content) }, { status: 201 }), 1];
  }
  if (url.pathname === "/api/v1/copy" && request.method === "PUT") {
    copy = { body: new Uint8Array(await request.arrayBuffer()), type: request.headers.get("content-type") ?? "text/plain" };
    return [json(JSON.stringify({ status: "success", data: { bytes: copy.body.length } })), 0];
  }
  if (url.searchParams.has("copy")) {
    if (!copy) return [json(JSON.stringify({ status: "error", error: { code: "NOT_FOUND", message: "PUT /api/v1/copy first" } }), 404), 0];
    return [new Response(copy.body, { headers: { "content-type": copy.type } }), 0];
  }
  return [json(padded(Number(url.searchParams.get("bytes") ?? 0))), 0];
}

export default {
  async fetch(request, env) {
    const [response, trips] = await answer(request, env);
    if (env.LOG === "true") {
      console.info(JSON.stringify({ request_id: crypto.randomUUID(), route: "/api/v1/*", d1_round_trips: trips, actor: "anonymous", error: null }));
    }
    return response;
  },
};
