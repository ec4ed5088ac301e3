// The benchmark's data, created through the API: 10 writers, 41 tagged stories, one hot story with 100 segments,
// rewrites, votes, pins, a summary, comments and forks, and a branch with four bots queued for turns.
import { api, words } from "./lib.mjs";

export async function seed(base) {
  const call = api(base);
  const register = async (i) =>
    (await call("/auth/register", { body: { username: `w${i}`, email: `w${i}@example.com`, password: "bench password", user_type: "human" } })).access_token;
  const bot = async (name) => {
    const reg = (await call("/auth/bot/register", { body: { name, model: "bench" } })).data;
    const token = (await call("/auth/bot/login", { body: { api_key: reg.api_key } })).access_token;
    return { id: reg.bot_id, token };
  };
  console.log("seeding data through the API…");
  const writers = [];
  for (let i = 0; i < 10; i++) writers.push(await register(i));
  const story = (i) => ({
    title: `Bench story ${i}`,
    background: "A benchmark story that never ends.",
    starter: "It begins.",
    initial_segments: [words(10), words(10), words(10)],
    language: "en",
    min_length: 5,
    max_length: 200,
    // What a story is: every story tagged, a third of them teen, so a filtered list has something to leave out.
    tags: ["bench", i % 2 ? "harbour" : "lighthouse"],
    rating: typeof i === "number" && i % 3 === 2 ? "teen" : "general",
  });
  const stories = [];
  for (let i = 0; i < 41; i++) stories.push((await call("/stories", { token: writers[i % 10], body: story(i) })).data);
  const hot = stories[0];
  const hotSegments = [];
  for (let i = 0; i < 100; i++)
    hotSegments.push((await call(`/branches/${hot.main_branch_id}/segments`, { token: writers[i % 10], body: { content: words(20) } })).data);
  const segment = hotSegments[0].id;
  for (let i = 1; i < 6; i++) await call(`/segments/${segment}/rewrites`, { token: writers[i], body: { content: words(20), reason: "tighter" } });
  for (let i = 1; i < 6; i++) await call("/votes", { token: writers[i], body: { target_type: "segment", target_id: segment, vote: 1 } });
  for (let i = 0; i < 3; i++) await call(`/stories/${hot.id}/pins`, { token: writers[0], body: { title: `pin ${i}`, content: `pinned note ${i}` } });
  await call(`/branches/${hot.main_branch_id}/summary`, { method: "POST", token: writers[0] });
  for (let i = 0; i < 30; i++) await call(`/branches/${hot.main_branch_id}/comments`, { token: writers[i % 10], body: { content: `comment ${i}` } });
  for (let i = 0; i < 5; i++) await call(`/stories/${hot.id}/branches`, { token: writers[i], body: { title: `fork ${i}` } });
  await call("/votes", { token: writers[1], body: { target_type: "branch", target_id: hot.main_branch_id, vote: 1 } });
  const turns = (await call("/stories", { token: writers[0], body: story("turns") })).data.main_branch_id;
  const bots = [];
  for (let i = 0; i < 4; i++) {
    bots.push(await bot(`bench-bot-${i}`));
    await call(`/branches/${turns}/join`, { token: bots[i].token, body: {} });
  }
  // A write's bookmark: reads that carry it must reach D1 (read your writes), never the micro-cache.
  const write = await fetch(`${base}/branches/${stories[1].main_branch_id}/segments`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${writers[1]}` },
    body: JSON.stringify({ content: words(20) }),
  });
  const bookmark = write.headers.get("x-d1-bookmark");
  return { writers, stories, hot, segment, turns, bots, bookmark };
}

/**
 * Segment writes spread round-robin over 40 stories' main lines (all but the hot story, whose reads are measured) and
 * the writers: a list of requests for `load`, sent in turn.
 */
export function spreadWrites({ writers, stories }) {
  const targets = stories.slice(1, 41);
  return targets.map((story, n) => ({
    method: "POST",
    path: `/api/v1/branches/${story.main_branch_id}/segments`,
    headers: { "content-type": "application/json", authorization: `Bearer ${writers[n % writers.length]}` },
    body: JSON.stringify({ content: words(20) }),
  }));
}

/** The write ceiling's requests (bench/ceiling/, `POST /write`): the same spread over 40 branches and the same body size. */
export function spreadCeiling() {
  return Array.from({ length: 40 }, (_, n) => ({
    method: "POST",
    path: "/api/v1/write",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ branch: `branch-${n}`, content: "w ".repeat(20) }),
  }));
}
