// The cache-first path's read leases in miniature (src/middleware/read-limit.ts, src/middleware/cache-first.ts), to show what
// a request that awaits another request's promise does once V8 has optimized the code: bench/cross-request/run.mjs.
// `?shared` keeps the old rule (one purchase in flight per address, which the address's other reads await);
// without it, each read that finds no lease buys its own (the rule since).
const leases = new Map();
const purchases = new Map();
const bytes = new TextEncoder().encode(JSON.stringify({ status: "success", data: "x".repeat(500) }));

function take(key, now) {
  const lease = leases.get(key);
  if (!lease || lease.expires <= now || lease.left <= 0) return false;
  lease.left -= 1;
  return true;
}

function grant(key, now) {
  const live = leases.get(key);
  leases.set(key, { left: (live && live.expires > now ? live.left : 0) + 9, expires: now + 60_000 });
}

/** The old rule: the address's other reads await the one purchase in flight. */
async function admitShared(limiter, key) {
  for (;;) {
    if (take(key, Date.now())) return true;
    const pending = purchases.get(key);
    if (pending) {
      if (!(await pending)) return false;
      continue;
    }
    const purchase = limiter
      .limit({ key })
      .then(({ success }) => {
        if (success) grant(key, Date.now());
        return success;
      })
      .finally(() => purchases.delete(key));
    purchases.set(key, purchase);
    return purchase;
  }
}

/** The rule since: every read buys for itself. */
async function admitOwn(limiter, key) {
  if (take(key, Date.now())) return true;
  const { success } = await limiter.limit({ key });
  if (success) grant(key, Date.now());
  return success || take(key, Date.now());
}

function frontDoor(admit, limiter, key) {
  const answer = () => new Response(bytes, { headers: { "content-type": "application/json" } });
  const admitted = take(key, Date.now()) || admit(limiter, key);
  return admitted === true ? answer() : admitted.then((ok) => (ok ? answer() : null));
}

const orFullPath = (door, full) => (door instanceof Promise ? door.then((res) => res ?? full(), full) : (door ?? full()));
const instant = { limit: async () => ({ success: true }) };
let warmed = 0;

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const admit = url.searchParams.has("shared") ? admitShared : admitOwn;
    if (url.pathname === "/warm") {
      // Many reads in this one request, three at once per address: the functions get hot, and V8 optimizes them.
      const rounds = Number(url.searchParams.get("rounds"));
      for (let i = 0; i < rounds; i++) {
        const key = `warm-${warmed++}`;
        const doors = [0, 1, 2].map(() => orFullPath(frontDoor(admit, instant, key), () => new Response("full")));
        for (const door of doors) await (await door).arrayBuffer();
      }
      return new Response(`warmed ${rounds}`);
    }
    // A read whose lease purchase takes a while (a timer of this request's, then the real binding).
    const slow = {
      limit: async (options) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return env.READ_LIMITER.limit(options);
      },
    };
    return orFullPath(frontDoor(admit, slow, request.headers.get("cf-connecting-ip") ?? ""), () => new Response("full"));
  },
};
