import { describe, expect, it } from "vitest";
import { type Member, type TurnEvent, type TurnState, estimatedWait, nextAfter, queueView, transition } from "../../src/turns/rules";

/** The pure turn rule, table by table: exact values, no bounds. */

const HOUR = 3_600_000;
const NOW = Date.parse("2026-01-01T00:00:00.000Z");
const member = (botId: string, joinSeq: number): Member => ({ botId, name: `name-${botId}`, role: "narrator", joinSeq, joinedAt: "2026-01-01T00:00:00.000Z" });
const [a, b, c] = [member("a", 1), member("b", 2), member("c", 3)];
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
  ])("after $after among $members.length → $next", ({ members, after, next }) => {
    expect(nextAfter(members, after)?.botId ?? null).toBe(next);
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
    refusal: { reason: "not_your_turn", queued: true, current: "a", estimatedWait: 1000 + 3600 },
  },
  {
    name: "an unqueued bot in turn mode is refused, no wait",
    before: state([a, b], "b", NOW + 5),
    event: { type: "submit", writer: bot("x") },
    refusal: { reason: "not_your_turn", queued: false, current: "b", estimatedWait: null },
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
    expect(queueView(state([a, b], "b", NOW + HOUR))).toEqual({
      turn_mode: true,
      current_turn: { bot_id: "b", name: "name-b", deadline: "2026-01-01T01:00:00.000Z" },
      members: [
        { bot_id: "a", name: "name-a", role: "narrator", your_turn_order: 1 },
        { bot_id: "b", name: "name-b", role: "narrator", your_turn_order: 2 },
      ],
    });
    expect(queueView(state([], null, null))).toEqual({ turn_mode: false, current_turn: null, members: [] });
  });
});
