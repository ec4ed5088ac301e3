import type { MiddlewareHandler } from "hono";
import { configOf } from "../config";
import type { AppEnv } from "../context";
import { getDb } from "../db/client";
import { meteredD1 } from "../db/metered";
import { BranchRooms } from "../durable/branch-client";
import { searchShardsOf } from "../durable/search-shards";
import { RequestMeter } from "../lib/meter";

const BOOKMARK_HEADER = "x-d1-bookmark";
// D1 bookmarks are dash-separated hex groups; anything else is ignored rather than passed to D1.
const BOOKMARK = /^[0-9a-f]{1,32}(-[0-9a-f]{1,64}){1,8}$/i;

/** Reads start at the nearest replica and writes at the primary, unless the client's bookmark says where. */
function openSession(db: D1Database, bookmark: string | undefined, { write }: { write: boolean }): D1DatabaseSession {
  if (bookmark && BOOKMARK.test(bookmark)) {
    try {
      return db.withSession(bookmark);
    } catch {
      // an unknown bookmark falls back to the default below
    }
  }
  return db.withSession(write ? "first-primary" : "first-unconstrained");
}

/**
 * Opens the request's D1 session (read-your-writes from a client's `x-d1-bookmark`, unless `bookmarks` is off for
 * the door), meters it, and puts the services on `c.var` (config, db, rooms, meter); afterwards writes
 * `Server-Timing` and the newest bookmark.
 */
export const servicesAndServerTiming =
  ({ bookmarks }: { bookmarks: boolean }): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const write = !["GET", "HEAD", "OPTIONS"].includes(c.req.method);
    // Opened on the first query: a micro-cache hit never opens a session.
    let session: D1DatabaseSession | null = null;
    const sent = bookmarks ? c.req.header(BOOKMARK_HEADER) : undefined;
    const open = () => (session ??= openSession(c.env.DB, sent, { write }));
    const meter = new RequestMeter(() => session?.getBookmark() ?? null);
    c.set("config", configOf(c.env));
    c.set("meter", meter);
    c.set("db", getDb(meteredD1(open, meter)));
    c.set("rooms", new BranchRooms(c.env.BRANCH_ROOM, meter));
    c.set("search", searchShardsOf(c.env, meter));
    await next();
    c.res.headers.set("Server-Timing", meter.serverTiming());
    const newest = meter.bookmark();
    if (newest) c.res.headers.set(BOOKMARK_HEADER, newest);
  };
