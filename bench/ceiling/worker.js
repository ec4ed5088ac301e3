// The local ceilings: the smallest Workers that do what a Storyloom request must, under the same `wrangler dev`
// and deployed the same way (static assets in front, `/api/v1/*` to the Worker first). With LOG = "true" each
// request writes one JSON line of the same shape as Storyloom's access log.
//   GET  /api/v1/        answers at once (a cached read's ceiling)
//   GET  /api/v1/d1      makes one D1 round trip (a read that must reach D1)
//   ?bytes=N on either pads the JSON answer to about N bytes, so a read is compared with a ceiling that sends
//   as much (the platform's cost of moving a body is not the Worker's code); on /d1 the D1 row carries about N
//   bytes too, as a read's rows carry what it answers
//   POST /api/v1/write   one RPC to a SQLite-backed Durable Object that runs one D1 batch of two statements
//                        (insert a row, bump a counter): a segment write's ceiling
import { DurableObject } from "cloudflare:workers";
import { BUMP_COUNTER, CEILING_TABLES, INSERT_ROW } from "./statements.js";

let tables = null;
const ensureTables = (db) => (tables ??= db.batch(CEILING_TABLES.map((sql) => db.prepare(sql))));

export class Room extends DurableObject {
  async write(branch, body) {
    await ensureTables(this.env.DB);
    const id = crypto.randomUUID();
    await this.env.DB.batch([this.env.DB.prepare(INSERT_ROW).bind(id, branch, body), this.env.DB.prepare(BUMP_COUNTER).bind(branch)]);
    return { id };
  }
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
const json = (body, status = 200) => new Response(body, { status, headers: { "content-type": "application/json" } });

async function answer(request, env) {
  const url = new URL(request.url);
  const bytes = Number(url.searchParams.get("bytes") ?? 0);
  if (url.pathname === "/api/v1/d1") {
    // The row SQLite makes carries about as many bytes as the answer (a read that reaches D1 reads what it sends).
    const row = await env.DB.prepare("SELECT 1 AS ok, hex(zeroblob(?)) AS pad")
      .bind(Math.floor(bytes / 2))
      .first();
    return [json(padded(row.ok === 1 && row.pad.length >= 0 ? bytes : 0)), 1];
  }
  if (url.pathname === "/api/v1/write" && request.method === "POST") {
    const { branch, content } = await request.json();
    const room = env.ROOM.get(env.ROOM.idFromName(branch));
    return [Response.json({ status: "success", data: await room.write(branch, content) }, { status: 201 }), 1];
  }
  return [json(padded(bytes)), 0];
}

export default {
  async fetch(request, env) {
    const [response, trips] = await answer(request, env);
    if (env.LOG === "true") {
      console.log(JSON.stringify({ request_id: crypto.randomUUID(), route: "/api/v1/*", d1_round_trips: trips, actor: "anonymous", error: null }));
    }
    return response;
  },
};
