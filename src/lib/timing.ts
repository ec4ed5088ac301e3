import type { Context, MiddlewareHandler } from "hono";
import { type D1Meter, meteredD1, newMeter, serverTiming } from "../db/metered";
import type { AppEnv } from "../env";

const BOOKMARK_HEADER = "x-d1-bookmark";
// D1 bookmarks are dash-separated hex groups; anything else is ignored rather than passed to D1.
const BOOKMARK = /^[0-9a-f]{1,32}(-[0-9a-f]{1,64}){1,8}$/i;

/** What a Durable Object reports about the D1 work it did for a call. */
export interface ObjectD1 {
  roundTrips: number;
  ms: number;
  bookmark: string | null;
}

function openSession(db: D1Database, bookmark: string | undefined, write: boolean): D1DatabaseSession {
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
 * Every request gets a D1 session (read-your-writes from a client's `x-d1-bookmark`, otherwise the nearest
 * replica for reads and the primary for writes), a meter on it, and a `Server-Timing` header with the count.
 */
export const metering: MiddlewareHandler<AppEnv> = async (c, next) => {
  const meter = newMeter();
  const write = !["GET", "HEAD", "OPTIONS"].includes(c.req.method);
  const session = openSession(c.env.DB, c.req.header(BOOKMARK_HEADER), write);
  c.env = { ...c.env, DB: meteredD1(session, meter) };
  c.set("meter", meter);
  c.set("objects", []);
  await next();
  c.res.headers.set("Server-Timing", serverTiming(meter, c.get("objects") ?? []));
  const bookmark = c.get("bookmark") ?? session.getBookmark();
  if (bookmark) c.res.headers.set(BOOKMARK_HEADER, bookmark);
};

/** Times a Durable Object call and adds the D1 work it reports to this request's figures. */
export async function viaObject<T>(c: Context<AppEnv>, name: string, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await call();
  c.get("objects")?.push({ name, ms: performance.now() - started });
  const d1 = (result as { d1?: ObjectD1 } | undefined)?.d1;
  const meter: D1Meter | undefined = c.get("meter");
  if (d1 && meter) {
    meter.roundTrips += d1.roundTrips;
    meter.ms += d1.ms;
    if (d1.bookmark) c.set("bookmark", d1.bookmark);
  }
  return result;
}
