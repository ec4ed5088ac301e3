import { describe, expect, it } from "vitest";
import { type Member, type TurnEvent, type TurnState, estimatedWait, nextAfter, queueView, transition } from "../../src/turns/rules";

/** The pure turn rule, table by table: exact values, no bounds. */

const HOUR = 3_600_000;
const NOW = Date.parse("2026-01-01T00:00:00.000Z");
const member = (botId: string, joinSeq: number, sitsOutUntil: number | null = null): Member => ({
  botId,
  name: `name-${botId}`,
  role: "narrator",
  joinSeq,
  joinedAt: "2026-01-01T00:00:00.000Z",
  sitsOutUntil,
});
const [a, b, c] = [member("a", 1), member("b", 2), member("c", 3)];
/** The same bots sitting out (a limit refused them at their turn) until `until`. */
const out = (m: Member, until: number): Member => ({ ...m, sitsOutUntil: until });
const state = (members: Member[], current: string | null, deadline: number | null): TurnState => ({ members, current, deadline });

describe("nextAfter: the next bot in join order, wrapping", () => {
  it.each([
    { members: [a, b, c], after: "a", next: "b" },
    { members: [a, b, c], after: "b", next: "c" },
    { members: [a, b, c], after: "c", next: "a" },
    { members: [a], after: "a", next: "a" },
    { members: [a, b, c], after: "stranger", next: "a" },
    { members: [a, b, c], after: null, next: "a" },
    { members: [], after: "a", next: null },
    { members: [a, out(b, NOW + 1), c], after: "a", next: "c" },
    { members: [a, out(b, NOW + 1), out(c, NOW + 1)], after: "a", next: "a" },
    { members: [out(a, NOW + 1), b], after: null, next: "b" },
    { members: [out(a, NOW + 1), out(b, NOW + 1)], after: "a", next: null },
    { members: [a, out(b, NOW), c], after: "a", next: "b" },
    { members: [a, out(b, NOW - 1), c], after: "a", next: "b" },
  ])("after $after among $members.length, skipping bots sitting out → $next", ({ members, after, next }) => {
    expect(nextAfter(members, after, NOW)?.botId ?? null).toBe(next);
  });
});

describe("estimatedWait: seconds left on the current turn plus a full timeout per bot in between", () => {
  it.each([
    { name: "the holder itself", s: state([a, b, c], "a", NOW + HOUR), bot: "a", wait: 0 },
    { name: "next in line", s: state([a, b, c], "a", NOW + 1_800_000), bot: "b", wait: 1800 },
    { name: "two away", s: state([a, b, c], "a", NOW + 1_800_000), bot: "c", wait: 1800 + 3600 },
    { name: "wrapping round", s: state([a, b, c], "c", NOW + 600_000), bot: "b", wait: 600 + 3600 },
    { name: "a partial second rounds up", s: state([a, b], "a", NOW + 1_500), bot: "b", wait: 2 },
    { name: "a passed deadline counts as none left", s: state([a, b], "a", NOW - 5_000), bot: "b", wait: 0 },
    { name: "no deadline", s: state([a, b, c], "a", null), bot: "c", wait: 3600 },
    { name: "nobody holds the turn", s: state([a, b], null, null), bot: "b", wait: 0 },
    { name: "not queued", s: state([a, b], "a", NOW + HOUR), bot: "x", wait: null },
    { name: "sitting out past its place in line: until its return", s: state([a, out(b, NOW + 7_200_000)], "a", NOW + 600_000), bot: "b", wait: 7200 },
    { name: "sitting out, back before its place comes", s: state([a, b, out(c, NOW + 60_000)], "a", NOW + 600_000), bot: "c", wait: 600 + 3600 },
    {
      name: "nobody holds the turn, sitting out: until its return",
      s: state([out(a, NOW + 90_500), out(b, NOW + HOUR)], null, NOW + 90_500),
      bot: "a",
      wait: 91,
    },
    { name: "nobody holds the turn, back already", s: state([out(a, NOW - 1), out(b, NOW + HOUR)], null, NOW - 1), bot: "a", wait: 0 },
  ])("$name → $wait", ({ s, bot, wait }) => {
    expect(estimatedWait(s, bot, HOUR, NOW)).toBe(wait);
  });
});

interface Row {
  name: string;
  before: TurnState;
  event: TurnEvent;
  after?: TurnState;
  member?: unknown;
  turn?: boolean;
  announce?: string | null;
  refusal?: unknown;
}

const human = { id: "h", type: "human" as const };
const bot = (id: string) => ({ id, type: "bot" as const });

const rows: Row[] = [
  // submit
  {
    name: "a human writes: nothing moves",
    before: state([a, b], "a", NOW + 5),
    event: { type: "submit", writer: human },
    after: state([a, b], "a", NOW + 5),
    member: null,
    turn: false,
    announce: null,
  },
  {
    name: "an admin writes: nothing moves",
    before: state([a, b], "a", NOW + 5),
    event: { type: "submit", writer: { id: "adm", type: "admin" } },
    after: state([a, b], "a", NOW + 5),
    member: null,
    turn: false,
    announce: null,
  },
  {
    name: "a bot on a branch without a queue writes freely",
    before: state([], null, null),
    event: { type: "submit", writer: bot("z") },
    after: state([], null, null),
    member: null,
    turn: false,
    announce: null,
  },
  {
    name: "the holder writes: the turn passes to the next",
    before: state([a, b, c], "a", NOW + 5),
    event: { type: "submit", writer: bot("a") },
    after: state([a, b, c], "b", NOW + HOUR),
    member: null,
    turn: true,
    announce: "b",
  },
  {
    name: "the last bot writes: the turn wraps to the first",
    before: state([a, b, c], "c", NOW + 5),
    event: { type: "submit", writer: bot("c") },
    after: state([a, b, c], "a", NOW + HOUR),
    member: null,
    turn: true,
    announce: "a",
  },
  {
    name: "a lone bot writes: its own turn again, fresh deadline",
    before: state([a], "a", NOW + 5),
    event: { type: "submit", writer: bot("a") },
    after: state([a], "a", NOW + HOUR),
    member: null,
    turn: true,
    announce: "a",
  },
  {
    name: "a queued bot out of turn is refused with its wait",
    before: state([a, b, c], "a", NOW + 1_000_000),
    event: { type: "submit", writer: bot("c") },
    refusal: { reason: "not_your_turn", queued: true, current: "a", estimatedWait: 1000 + 3600, sitsOutUntil: null },
  },
  {
    name: "an unqueued bot in turn mode is refused, no wait",
    before: state([a, b], "b", NOW + 5),
    event: { type: "submit", writer: bot("x") },
    refusal: { reason: "not_your_turn", queued: false, current: "b", estimatedWait: null, sitsOutUntil: null },
  },
  // join
  {
    name: "joining an empty queue starts the joiner's turn",
    before: state([], null, null),
    event: { type: "join", member: a },
    after: state([a], "a", NOW + HOUR),
    member: { add: a },
    turn: true,
    announce: "a",
  },
  {
    name: "joining behind others changes only the queue",
    before: state([a], "a", NOW + 7),
    event: { type: "join", member: b },
    after: state([a, b], "a", NOW + 7),
    member: { add: b },
    turn: false,
    announce: null,
  },
  {
    name: "joining again changes nothing",
    before: state([a, b], "a", NOW + 7),
    event: { type: "join", member: { ...b, joinSeq: 9 } },
    after: state([a, b], "a", NOW + 7),
    member: null,
    turn: false,
    announce: null,
  },
  // leave
  {
    name: "a waiting bot leaves: the turn stays",
    before: state([a, b, c], "a", NOW + 7),
    event: { type: "leave", botId: "b" },
    after: state([a, c], "a", NOW + 7),
    member: { remove: "b" },
    turn: false,
    announce: null,
  },
  {
    name: "the holder leaves: the next bot's turn begins",
    before: state([a, b, c], "b", NOW + 7),
    event: { type: "leave", botId: "b" },
    after: state([a, c], "c", NOW + HOUR),
    member: { remove: "b" },
    turn: true,
    announce: "c",
  },
  {
    name: "the last holder leaves: the turn wraps to the first",
    before: state([a, b, c], "c", NOW + 7),
    event: { type: "leave", botId: "c" },
    after: state([a, b], "a", NOW + HOUR),
    member: { remove: "c" },
    turn: true,
    announce: "a",
  },
  {
    name: "the only bot leaves: no turn, no deadline",
    before: state([a], "a", NOW + 7),
    event: { type: "leave", botId: "a" },
    after: state([], null, null),
    member: { remove: "a" },
    turn: true,
    announce: null,
  },
  { name: "a bot not queued cannot leave", before: state([a], "a", NOW + 7), event: { type: "leave", botId: "x" }, refusal: { reason: "not_queued" } },
  // timeout
  {
    name: "a timeout passes the turn on",
    before: state([a, b], "a", NOW),
    event: { type: "timeout" },
    after: state([a, b], "b", NOW + HOUR),
    member: null,
    turn: true,
    announce: "b",
  },
  {
    name: "a timeout with one bot gives it a fresh deadline",
    before: state([a], "a", NOW),
    event: { type: "timeout" },
    after: state([a], "a", NOW + HOUR),
    member: null,
    turn: true,
    announce: "a",
  },
  {
    name: "a timeout with nobody holding the turn does nothing",
    before: state([], null, null),
    event: { type: "timeout" },
    after: state([], null, null),
    member: null,
    turn: false,
    announce: null,
  },
  // limited: a limit refused a bot at its turn; it sits out until the limit frees
  {
    name: "the holder is limited: it sits out and the next bot's turn begins",
    before: state([a, b, c], "a", NOW + 5),
    event: { type: "limited", botId: "a", until: NOW + HOUR },
    after: state([out(a, NOW + HOUR), b, c], "b", NOW + HOUR),
    member: { sitOut: "a", until: NOW + HOUR },
    turn: true,
    announce: "b",
  },
  {
    name: "the holder is limited: the bots sitting out are skipped too",
    before: state([a, out(b, NOW + 9), c], "c", NOW + 5),
    event: { type: "limited", botId: "c", until: NOW + HOUR },
    after: state([a, out(b, NOW + 9), out(c, NOW + HOUR)], "a", NOW + HOUR),
    member: { sitOut: "c", until: NOW + HOUR },
    turn: true,
    announce: "a",
  },
  {
    name: "a lone bot is limited: nobody holds the turn until it is back, and nobody is told",
    before: state([a], "a", NOW + 5),
    event: { type: "limited", botId: "a", until: NOW + 1234 },
    after: state([out(a, NOW + 1234)], null, NOW + 1234),
    member: { sitOut: "a", until: NOW + 1234 },
    turn: true,
    announce: null,
  },
  {
    name: "the last bot not sitting out is limited: nobody holds the turn until the first is back",
    before: state([out(a, NOW + 900), b, out(c, NOW + 300)], "b", NOW + 5),
    event: { type: "limited", botId: "b", until: NOW + HOUR },
    after: state([out(a, NOW + 900), out(b, NOW + HOUR), out(c, NOW + 300)], null, NOW + 300),
    member: { sitOut: "b", until: NOW + HOUR },
    turn: true,
    announce: null,
  },
  {
    name: "a bot sitting out is refused again as long: nothing changes, nobody is told",
    before: state([out(a, NOW + HOUR)], null, NOW + HOUR),
    event: { type: "limited", botId: "a", until: NOW + HOUR },
    after: state([out(a, NOW + HOUR)], null, NOW + HOUR),
    member: null,
    turn: false,
    announce: null,
  },
  {
    name: "a bot sitting out is refused until later (another limit): it sits out longer, the turn resumes later",
    before: state([out(a, NOW + 10), out(b, NOW + HOUR)], null, NOW + 10),
    event: { type: "limited", botId: "a", until: NOW + 2 * HOUR },
    after: state([out(a, NOW + 2 * HOUR), out(b, NOW + HOUR)], null, NOW + HOUR),
    member: { sitOut: "a", until: NOW + 2 * HOUR },
    turn: true,
    announce: null,
  },
  {
    name: "a bot limited while another holds the turn (it cannot write then): nothing changes",
    before: state([a, b], "a", NOW + 5),
    event: { type: "limited", botId: "b", until: NOW + HOUR },
    after: state([a, b], "a", NOW + 5),
    member: null,
    turn: false,
    announce: null,
  },
  {
    name: "a bot not queued is limited: nothing changes",
    before: state([a], "a", NOW + 5),
    event: { type: "limited", botId: "x", until: NOW + HOUR },
    after: state([a], "a", NOW + 5),
    member: null,
    turn: false,
    announce: null,
  },
  // the rotation around bots sitting out
  {
    name: "the holder writes: a bot sitting out is skipped",
    before: state([a, out(b, NOW + HOUR), c], "a", NOW + 5),
    event: { type: "submit", writer: bot("a") },
    after: state([a, out(b, NOW + HOUR), c], "c", NOW + HOUR),
    member: null,
    turn: true,
    announce: "c",
  },
  {
    name: "the holder writes while the other sits out: its own turn again",
    before: state([out(a, NOW + HOUR), b], "b", NOW + 5),
    event: { type: "submit", writer: bot("b") },
    after: state([out(a, NOW + HOUR), b], "b", NOW + HOUR),
    member: null,
    turn: true,
    announce: "b",
  },
  {
    name: "the holder writes after a bot's return: the returned bot's turn begins",
    before: state([out(a, NOW - 1), b], "b", NOW + 5),
    event: { type: "submit", writer: bot("b") },
    after: state([out(a, NOW - 1), b], "a", NOW + HOUR),
    member: null,
    turn: true,
    announce: "a",
  },
  {
    name: "a bot sitting out writes while another holds the turn: refused until its return",
    before: state([a, out(b, NOW + 7_200_000)], "a", NOW + 600_000),
    event: { type: "submit", writer: bot("b") },
    refusal: { reason: "not_your_turn", queued: true, current: "a", estimatedWait: 7200, sitsOutUntil: NOW + 7_200_000 },
  },
  {
    name: "nobody holds the turn and a returned bot writes before the alarm: the turn passes on from it",
    before: state([out(a, NOW - 1), out(b, NOW + HOUR)], null, NOW - 1),
    event: { type: "submit", writer: bot("a") },
    after: state([out(a, NOW - 1), out(b, NOW + HOUR)], "a", NOW + HOUR),
    member: null,
    turn: true,
    announce: "a",
  },
  {
    name: "nobody holds the turn and a bot sitting out writes: its limit decides; if it lets it write, it is back in",
    before: state([out(a, NOW + 5), b], null, NOW + 5),
    event: { type: "submit", writer: bot("a") },
    after: state([a, b], "b", NOW + HOUR),
    member: { sitOut: "a", until: null },
    turn: true,
    announce: "b",
  },
  {
    name: "nobody holds the turn: an unqueued bot is refused",
    before: state([out(a, NOW + 5)], null, NOW + 5),
    event: { type: "submit", writer: bot("x") },
    refusal: { reason: "not_your_turn", queued: false, current: null, estimatedWait: null, sitsOutUntil: null },
  },
  {
    name: "nobody holds the turn: a human writes and nothing moves",
    before: state([out(a, NOW + 5)], null, NOW + 5),
    event: { type: "submit", writer: human },
    after: state([out(a, NOW + 5)], null, NOW + 5),
    member: null,
    turn: false,
    announce: null,
  },
  {
    name: "the first return comes (the alarm): that bot's turn begins",
    before: state([out(a, NOW + HOUR), out(b, NOW)], null, NOW),
    event: { type: "timeout" },
    after: state([out(a, NOW + HOUR), out(b, NOW)], "b", NOW + HOUR),
    member: null,
    turn: true,
    announce: "b",
  },
  {
    name: "the alarm fires early: the deadline counts as come, so the bot due back then is back",
    before: state([out(a, NOW + 500)], null, NOW + 500),
    event: { type: "timeout" },
    after: state([out(a, NOW + 500)], "a", NOW + HOUR),
    member: null,
    turn: true,
    announce: "a",
  },
  {
    name: "two bots back at once: the first in join order",
    before: state([out(a, NOW - 2), out(b, NOW - 2)], null, NOW - 2),
    event: { type: "timeout" },
    after: state([out(a, NOW - 2), out(b, NOW - 2)], "a", NOW + HOUR),
    member: null,
    turn: true,
    announce: "a",
  },
  {
    name: "a timeout passes the turn past the bots sitting out",
    before: state([a, out(b, NOW + HOUR), c], "a", NOW),
    event: { type: "timeout" },
    after: state([a, out(b, NOW + HOUR), c], "c", NOW + HOUR),
    member: null,
    turn: true,
    announce: "c",
  },
  {
    name: "a bot joins while every bot sits out: its turn begins at once",
    before: state([out(a, NOW + HOUR)], null, NOW + HOUR),
    event: { type: "join", member: b },
    after: state([out(a, NOW + HOUR), b], "b", NOW + HOUR),
    member: { add: b },
    turn: true,
    announce: "b",
  },
  {
    name: "the holder leaves while the others sit out: nobody holds the turn until the first is back",
    before: state([a, out(b, NOW + 700), out(c, NOW + 400)], "a", NOW + 5),
    event: { type: "leave", botId: "a" },
    after: state([out(b, NOW + 700), out(c, NOW + 400)], null, NOW + 400),
    member: { remove: "a" },
    turn: true,
    announce: null,
  },
  {
    name: "a bot sitting out leaves while nobody holds the turn: it simply leaves, the turn resumes with the others",
    before: state([out(a, NOW + 400), out(b, NOW + 700)], null, NOW + 400),
    event: { type: "leave", botId: "a" },
    after: state([out(b, NOW + 700)], null, NOW + 700),
    member: { remove: "a" },
    turn: true,
    announce: null,
  },
  {
    name: "the only bot, sitting out, leaves: no queue, no deadline",
    before: state([out(a, NOW + 400)], null, NOW + 400),
    event: { type: "leave", botId: "a" },
    after: state([], null, null),
    member: { remove: "a" },
    turn: true,
    announce: null,
  },
  {
    name: "a bot sitting out leaves while another holds the turn: only the queue changes",
    before: state([a, out(b, NOW + 400)], "a", NOW + 5),
    event: { type: "leave", botId: "b" },
    after: state([a], "a", NOW + 5),
    member: { remove: "b" },
    turn: false,
    announce: null,
  },
];

describe("transition: what each event does to the queue, what to write, whose turn begins", () => {
  it.each(rows)("$name", (row) => {
    const result = transition(row.before, row.event, NOW, HOUR);
    if (row.refusal) {
      expect(result).toEqual({ ok: false, refusal: row.refusal });
      return;
    }
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.state).toEqual(row.after);
    expect(result.writes).toEqual({ member: row.member, turn: row.turn });
    expect(result.announce?.botId ?? null).toBe(row.announce);
  });
});

describe("queueView: the queue as reads show it", () => {
  it("names the holder with its deadline and numbers the members from 1", () => {
    expect(queueView(state([a, b], "b", NOW + HOUR), NOW)).toEqual({
      turn_mode: true,
      current_turn: { bot_id: "b", name: "name-b", deadline: "2026-01-01T01:00:00.000Z" },
      resumes_at: null,
      members: [
        { bot_id: "a", name: "name-a", role: "narrator", your_turn_order: 1, sits_out_until: null },
        { bot_id: "b", name: "name-b", role: "narrator", your_turn_order: 2, sits_out_until: null },
      ],
    });
    expect(queueView(state([], null, null), NOW)).toEqual({ turn_mode: false, current_turn: null, resumes_at: null, members: [] });
  });

  it("shows who sits out until when (a past return is no longer shown), and when nobody holds the turn, when it resumes", () => {
    expect(queueView(state([out(a, NOW - 1), out(b, NOW + HOUR)], "a", NOW + 5), NOW).members.map((m) => m.sits_out_until)).toEqual([
      null,
      "2026-01-01T01:00:00.000Z",
    ]);
    expect(queueView(state([out(a, NOW + 60_000), out(b, NOW + HOUR)], null, NOW + 60_000), NOW)).toMatchObject({
      turn_mode: true,
      current_turn: null,
      resumes_at: "2026-01-01T00:01:00.000Z",
      members: [{ sits_out_until: "2026-01-01T00:01:00.000Z" }, { sits_out_until: "2026-01-01T01:00:00.000Z" }],
    });
  });
});
