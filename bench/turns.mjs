// One branch in turn mode under load: bots hammer it, each writing when it is its turn and retrying on
// NOT_YOUR_TURN; then the branch is read back to check the order.
import { api, d1Trips, sleep, words } from "./lib.mjs";

/** Bots write to one branch for `seconds`; accepted segments per second, their latencies, every status. */
export async function fourBots(base, branch, tokens, seconds) {
  const end = Date.now() + seconds * 1000;
  const latencies = [];
  const statuses = {};
  let trips = 0;
  await Promise.all(
    tokens.map(async (token) => {
      while (Date.now() < end) {
        const started = performance.now();
        const res = await fetch(`${base}/branches/${branch}/segments`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ content: words(20) }),
        });
        await res.text();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 201) {
          latencies.push(performance.now() - started);
          trips = d1Trips(res);
        } else await sleep(2);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    rps: latencies.length / seconds,
    p50: Math.round(latencies[latencies.length >> 1]),
    p99: Math.round(latencies[Math.floor(latencies.length * 0.99)]),
    total,
    statuses,
    trips,
  };
}

/** Reads the branch back: sequence_order contiguous, and the bots' segments in strict rotation. */
export async function checkOrder(base, branch) {
  const call = api(base);
  const segs = [];
  for (let offset = 0; ; offset += 100) {
    const page = (await call(`/branches/${branch}/segments?limit=100&offset=${offset}`)).data;
    segs.push(...page.segments);
    if (!page.pagination.has_more) break;
  }
  const contiguous = segs.every((s, i) => s.sequence_order === i + 1);
  const botSegs = segs.filter((s) => s.author_type === "bot").map((s) => s.bot_id);
  const first = botSegs.slice(0, 4);
  const rotating = new Set(first).size === Math.min(4, botSegs.length) && botSegs.every((id, i) => id === first[i % 4]);
  return { segments: segs.length, contiguous, rotating };
}
