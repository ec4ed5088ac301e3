/** The anonymous read window: 60 s. */
export const WINDOW_SECONDS = 60;
/** Reads one `limit()` call of the binding buys; the binding allows 60 calls a minute, so 600 reads. */
export const READS_PER_LEASE = 10;
const MAX_TRACKED_ADDRESSES = 10_000;

interface Lease {
  left: number;
  expires: number;
}

/**
 * Per-isolate leases on the rate-limiting binding. Each binding call admits a lease of READS_PER_LEASE reads for one
 * address, usable in this isolate until the window ends, so the binding is asked once per ten reads instead of every
 * read. An address is still held to 60 leases a minute wherever its reads land; reads spread over many isolates can
 * only be refused sooner (a lease's unused reads lapse), never later.
 */
export class ReadLeases {
  readonly #leases = new Map<string, Lease>();

  /** Takes one read from the address's lease; false when it has none left and a new one must be bought. */
  take(key: string, now: number): boolean {
    const lease = this.#leases.get(key);
    if (!lease || lease.expires <= now || lease.left <= 0) return false;
    lease.left -= 1;
    return true;
  }

  /**
   * Records a lease the binding granted, the current read already taken from it. Reads left on a live lease
   * are kept (added to, never overwritten), so concurrent purchases lose nothing.
   */
  grant(key: string, now: number): void {
    if (this.#leases.size >= MAX_TRACKED_ADDRESSES) this.#prune(now);
    const live = this.#leases.get(key);
    const left = live && live.expires > now ? live.left : 0;
    this.#leases.set(key, { left: left + READS_PER_LEASE - 1, expires: now + WINDOW_SECONDS * 1000 });
  }

  get size(): number {
    return this.#leases.size;
  }

  #prune(now: number): void {
    for (const [key, lease] of this.#leases) if (lease.expires <= now || lease.left <= 0) this.#leases.delete(key);
    // Still full of live leases: forgetting them only makes their addresses buy again sooner.
    if (this.#leases.size >= MAX_TRACKED_ADDRESSES) this.#leases.clear();
  }
}
