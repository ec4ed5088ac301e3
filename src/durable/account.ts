import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { RateState, Refusal } from "../lib/limit-error";

/** One rolling-window counter: at most `limit` hits per `windowMs` under `key`. */
export interface Counter {
  key: string;
  limit: number;
  windowMs: number;
  /** How the limit reads in errors, e.g. "10 per hour". */
  label: string;
  code: "RATE_LIMIT_EXCEEDED" | "DAILY_QUOTA_EXCEEDED";
}

export interface StoredResponse {
  status: number;
  body: string;
  contentType: string;
  /** The D1 bookmark the first answer carried, so a replay still lets the client read its write. */
  bookmark: string | null;
}

export type Admission =
  | { kind: "proceed"; reservation: string; rate: RateState | null }
  | { kind: "replay"; response: StoredResponse; rate: RateState | null }
  | { kind: "mismatch" }
  | ({ kind: "limited" } & Refusal);

interface Inflight {
  hash: string;
  done: Promise<void>;
  resolve: () => void;
}

const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** How long an admitted request's reservation counts before it is confirmed: a request that died releases it. */
const RESERVATION_HOLD_MS = 120_000;
const MAX_WINDOW_MS = 24 * 3600_000;
const INFLIGHT_WAIT_MS = 30_000;
/** Expired hits and answers are deleted at most this often: every query bounds its own window by time anyway. */
const PRUNE_EVERY_MS = 60_000;

/**
 * One per account (named by its id): rate-limit windows and idempotency keys. Its methods touch only its
 * own SQLite synchronously, so each admission is atomic; concurrent repeats of an idempotent request wait
 * for the first one in memory and then replay its response.
 *
 * A hit is admitted as a reservation (pending) and confirmed when its request succeeded. Only confirmed hits
 * and reservations younger than RESERVATION_HOLD_MS count, so a request killed mid-way (its settle never
 * arrives) stops counting when its hold runs out, and a cold start forgets every reservation at once: a
 * request still alive re-inserts its hits when it confirms. A crash therefore never refuses an honest retry.
 * (Answers stored here are the fast path; D1 keeps the durable record with each write.)
 */
export class AccountGate extends DurableObject<Env> {
  private inflight = new Map<string, Inflight>();
  private prunedAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS counted_hits (reservation TEXT NOT NULL, key TEXT NOT NULL, at INTEGER NOT NULL,
        pending INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS counted_hits_key_at ON counted_hits (key, at);
      CREATE INDEX IF NOT EXISTS counted_hits_reservation ON counted_hits (reservation);
      DELETE FROM counted_hits WHERE pending = 1;
      CREATE TABLE IF NOT EXISTS stored_answers (key TEXT PRIMARY KEY, hash TEXT NOT NULL, status INTEGER NOT NULL,
        body TEXT NOT NULL, content_type TEXT NOT NULL, bookmark TEXT, created_at INTEGER NOT NULL);`);
  }

  async admit(idem: { key: string; hash: string } | null, counters: Counter[]): Promise<Admission> {
    const now = Date.now();
    this.prune(now);
    const states = () => counters.map((c) => ({ c, ...this.window(c, now) }));
    if (idem) {
      const seen = await this.previous(idem);
      // A replay counts nothing but still says where the caller stands.
      if (seen?.kind === "replay") return { ...seen, rate: this.tightest(states(), now, 0) };
      if (seen) return seen;
    }
    return this.admitNew(idem, states(), now);
  }

  private admitNew(idem: { key: string; hash: string } | null, states: { c: Counter; count: number; oldest: number }[], now: number): Admission {
    const isOver = (s: (typeof states)[number]) => s.count >= s.c.limit;
    const over = states.find(isOver);
    if (over) {
      if (idem) this.release(idem.key);
      return { kind: "limited", ...this.refusal(over, now) };
    }
    const reservation = crypto.randomUUID();
    this.insertHits(
      reservation,
      states.map((s) => s.c.key),
      now,
      { pending: true },
    );
    return { kind: "proceed", reservation, rate: this.tightest(states, now, 1) };
  }

  /**
   * After the request: confirm its hits if it counted (re-inserting them if a cold start forgot the
   * reservation), release them otherwise, and store a 2xx response for replays.
   */
  async settle(
    idem: { key: string; hash: string } | null,
    reservation: string,
    outcome: { counted: boolean; response: StoredResponse | null; keys: string[] },
  ): Promise<void> {
    const { counted, response, keys } = outcome;
    const sql = this.ctx.storage.sql;
    if (!counted) sql.exec("DELETE FROM counted_hits WHERE reservation = ?", reservation);
    else if (!sql.exec("UPDATE counted_hits SET pending = 0 WHERE reservation = ?", reservation).rowsWritten) {
      // A cold start forgot the reservation (and deleted its pending hits): count the request again.
      this.insertHits(reservation, keys, Date.now(), { pending: false });
    }
    if (!idem) return;
    if (response) {
      this.ctx.storage.sql.exec(
        "INSERT OR REPLACE INTO stored_answers (key, hash, status, body, content_type, bookmark, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        idem.key,
        idem.hash,
        response.status,
        response.body,
        response.contentType,
        response.bookmark,
        Date.now(),
      );
    }
    this.release(idem.key);
  }

  /**
   * A stored or in-flight request under this key: replay it, refuse a different body, or wait for it.
   * Returns null once this request holds the key (checked and claimed with no await in between).
   */
  private async previous(idem: { key: string; hash: string }): Promise<Admission | null> {
    for (;;) {
      const row = this.ctx.storage.sql
        .exec<{ hash: string; status: number; body: string; content_type: string; bookmark: string | null }>(
          "SELECT hash, status, body, content_type, bookmark FROM stored_answers WHERE key = ? AND created_at > ?",
          idem.key,
          Date.now() - IDEMPOTENCY_TTL_MS,
        )
        .toArray()[0];
      if (row) {
        if (row.hash !== idem.hash) return { kind: "mismatch" };
        return { kind: "replay", response: { status: row.status, body: row.body, contentType: row.content_type, bookmark: row.bookmark }, rate: null };
      }
      const pending = this.inflight.get(idem.key);
      if (!pending) {
        this.claim(idem);
        return null;
      }
      if (pending.hash !== idem.hash) return { kind: "mismatch" };
      const finished = await Promise.race([pending.done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), INFLIGHT_WAIT_MS))]);
      if (!finished && this.inflight.get(idem.key) === pending) this.release(idem.key); // its request never settled
    }
  }

  private insertHits(reservation: string, keys: string[], at: number, { pending }: { pending: boolean }) {
    if (!keys.length) return;
    this.ctx.storage.sql.exec(
      "INSERT INTO counted_hits (reservation, key, at, pending) SELECT ?, value, ?, ? FROM json_each(?)",
      reservation,
      at,
      pending ? 1 : 0,
      JSON.stringify(keys),
    );
  }

  private claim(idem: { key: string; hash: string }) {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.inflight.set(idem.key, { hash: idem.hash, done, resolve });
  }

  private release(key: string) {
    const waiting = this.inflight.get(key);
    this.inflight.delete(key);
    waiting?.resolve();
  }

  private window(c: Counter, now: number) {
    const row = this.ctx.storage.sql
      .exec<{ n: number; oldest: number | null }>(
        "SELECT count(*) AS n, min(at) AS oldest FROM counted_hits WHERE key = ? AND at > ? AND (pending = 0 OR at > ?)",
        c.key,
        now - c.windowMs,
        now - RESERVATION_HOLD_MS,
      )
      .toArray()[0];
    return { count: row.n, oldest: row.oldest ?? now };
  }

  /** The counter closest to its limit, `adding` this request. */
  private tightest(states: { c: Counter; count: number; oldest: number }[], now: number, adding: number): RateState | null {
    return states.map((s) => this.rate(s, now, adding)).sort((a, b) => a.remaining - b.remaining)[0] ?? null;
  }

  private refusal(s: { c: Counter; count: number; oldest: number }, now: number): Refusal {
    const retryAfter = Math.max(1, Math.ceil((s.oldest + s.c.windowMs - now) / 1000));
    return { code: s.c.code, label: s.c.label, retryAfter, rate: this.rate(s, now, 0) };
  }

  private rate(s: { c: Counter; count: number; oldest: number }, now: number, adding: number): RateState {
    const count = s.count + adding;
    const oldest = s.count ? s.oldest : now;
    return { limit: s.c.limit, remaining: Math.max(0, s.c.limit - count), reset: Math.ceil((oldest + s.c.windowMs) / 1000) };
  }

  private prune(now: number) {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.ctx.storage.sql.exec("DELETE FROM counted_hits WHERE at <= ? OR (pending = 1 AND at <= ?)", now - MAX_WINDOW_MS, now - RESERVATION_HOLD_MS);
    this.ctx.storage.sql.exec("DELETE FROM stored_answers WHERE created_at <= ?", now - IDEMPOTENCY_TTL_MS);
  }
}
