/**
 * What one request costs at the edge: D1 round trips (every statement run, every batch, is one trip) and
 * their time, each Durable Object called, and the newest D1 bookmark seen. Shown as `Server-Timing`.
 */
export interface D1Counter {
  roundTrips: number;
  ms: number;
}

/** What a Durable Object reports about the D1 work it did for a call. */
export interface ObjectD1 extends D1Counter {
  bookmark: string | null;
}

export class RequestMeter implements D1Counter {
  roundTrips = 0;
  ms = 0;
  /** A bookmark reported by a Durable Object that wrote for this request (newer than the request's own). */
  objectBookmark: string | null = null;
  private readonly objects: { name: string; ms: number }[] = [];

  constructor(private readonly sessionBookmark: () => string | null = () => null) {}

  /** The newest bookmark this request's writes reached: a Durable Object's, or the request's own session's. */
  bookmark(): string | null {
    return this.objectBookmark ?? this.sessionBookmark();
  }

  /** Times a Durable Object call and adds the D1 work it reports (`result.d1`) to this request's figures. */
  async timeObject<T>(name: string, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await call();
    this.objects.push({ name, ms: performance.now() - started });
    const d1 = (result as { d1?: ObjectD1 } | undefined)?.d1;
    if (d1) {
      this.roundTrips += d1.roundTrips;
      this.ms += d1.ms;
      if (d1.bookmark) this.objectBookmark = d1.bookmark;
    }
    return result;
  }

  /** The Durable Objects this request reached, each named once (the access log's `objects`). */
  objectNames(): string[] {
    return [...new Set(this.objects.map((o) => o.name))];
  }

  /** `d1;desc="N round trips";dur=X` and one entry per Durable Object call. */
  serverTiming(): string {
    const trips = `${this.roundTrips} round trip${this.roundTrips === 1 ? "" : "s"}`;
    return [`d1;desc="${trips}";dur=${this.ms.toFixed(1)}`, ...this.objects.map((o) => `do;desc="${o.name}";dur=${o.ms.toFixed(1)}`)].join(", ");
  }
}
