/**
 * The turn rule of a branch, as DECISIONS states it, in one pure function. The branch's Durable Object loads
 * the state, calls `transition`, persists what it returns and announces the turn that begins; reads use
 * `queueView`. Nothing here does I/O or reads the clock.
 */

export interface Member {
  botId: string;
  name: string;
  role: string;
  joinSeq: number;
  joinedAt: string;
  /** A limit refused the bot at its turn: it sits out, skipped by the rotation, until then (epoch ms; null: never). */
  sitsOutUntil: number | null;
}

/**
 * A branch's queue in join order, whose turn it is, and when the room must act next (epoch ms): when the turn
 * runs out, or, with nobody holding it while every queued bot sits out, when the first of them comes back.
 */
export interface TurnState {
  members: Member[];
  current: string | null;
  deadline: number | null;
}

export type TurnEvent =
  /** A segment is about to be written by this writer (humans never move the turn). */
  | { type: "submit"; writer: { id: string; type: "human" | "bot" | "admin" } }
  | { type: "join"; member: Member }
  | { type: "leave"; botId: string }
  /** The deadline has passed (the room's alarm): the current turn ran out, or the first bot sitting out is back. */
  | { type: "timeout" }
  /** A bot was refused by a rate limit until `until` (epoch ms): it sits out; if it held the turn, the turn passes at once. */
  | { type: "limited"; botId: string; until: number };

export type Refusal =
  /** A bot in turn mode writing out of turn (or without having joined: `estimatedWait` null). */
  { reason: "not_your_turn"; queued: boolean; current: string | null; estimatedWait: number | null; sitsOutUntil: number | null } | { reason: "not_queued" };

export interface Writes {
  /** A member to add to or remove from the queue, or whose sitting out begins or ends (`until` null). */
  member: { add: Member } | { remove: string } | { sitOut: string; until: number | null } | null;
  /** True when the current turn or its deadline changed. */
  turn: boolean;
}

export type Transition = { ok: true; state: TurnState; writes: Writes; announce: Member | null } | { ok: false; refusal: Refusal };

export const NO_TURN: TurnState = { members: [], current: null, deadline: null };

/** The bot sits out at `now`: the rotation skips it. */
export const sitsOut = (m: Member, now: number) => m.sitsOutUntil !== null && m.sitsOutUntil > now;

/**
 * The first bot after `botId` in join order that does not sit out at `now`, wrapping after the last (`botId`
 * itself comes last); from the first bot when `botId` is not queued; null when every bot sits out.
 */
export function nextAfter(members: Member[], botId: string | null, now: number): Member | null {
  const i = members.findIndex((m) => m.botId === botId);
  for (let k = 1; k <= members.length; k++) {
    const m = members[(i + k) % members.length];
    if (!sitsOut(m, now)) return m;
  }
  return null;
}

/** When the first bot sitting out comes back (null when none does). */
const firstReturn = (members: Member[]): number | null =>
  members.reduce<number | null>((at, m) => (m.sitsOutUntil === null || (at !== null && at <= m.sitsOutUntil) ? at : m.sitsOutUntil), null);

/** The member whose turn it is, if any. */
export const holder = (state: TurnState): Member | null => state.members.find((m) => m.botId === state.current) ?? null;

/** Nobody holds the turn though bots are queued: every one of them sits out, until `state.deadline`. */
export const resumesAt = (state: TurnState): number | null => (state.current === null && state.members.length ? state.deadline : null);

/** A branch is in turn mode while at least one bot is queued; then only bots' writes are ordered. */
export const inTurnMode = (state: TurnState, writerType: string) => writerType === "bot" && state.members.length > 0;

const secondsUntil = (at: number | null, now: number) => (at === null ? 0 : Math.max(0, Math.ceil((at - now) / 1000)));

/**
 * Seconds until `botId` may write: what is left of the current turn plus one full timeout for each bot
 * between the current one and the caller, and never before the caller's own return when it sits out. Null for
 * a bot that is not queued; 0 at its own turn, or when nobody holds the turn and the caller does not sit out.
 */
export function estimatedWait(state: TurnState, botId: string, timeoutMs: number, now: number): number | null {
  const { members } = state;
  const mine = members.findIndex((m) => m.botId === botId);
  if (mine < 0) return null;
  const cur = members.findIndex((m) => m.botId === state.current);
  if (cur === mine) return 0;
  const back = sitsOut(members[mine], now) ? secondsUntil(members[mine].sitsOutUntil, now) : 0;
  if (cur < 0) return back;
  const between = (mine - cur - 1 + members.length) % members.length;
  return Math.max(back, secondsUntil(state.deadline, now) + between * (timeoutMs / 1000));
}

/** A bot may write in turn mode at its own turn, or, while nobody holds the turn, as any queued bot (its limits decide). */
const mayWrite = (state: TurnState, botId: string) => state.current === botId || (state.current === null && state.members.some((m) => m.botId === botId));

const unchanged = (state: TurnState): Transition => ({ ok: true, state, writes: { member: null, turn: false }, announce: null });

/**
 * The turn passes to `next`, with a fresh deadline; or, with no `next` (no bot queued, or every one sitting out),
 * to nobody until the first bot sitting out comes back.
 */
function passTo(members: Member[], next: Member | null, now: number, timeoutMs: number, member: Writes["member"]): Transition {
  const state = { members, current: next?.botId ?? null, deadline: next ? now + timeoutMs : firstReturn(members) };
  return { ok: true, state, writes: { member, turn: true }, announce: next };
}

/** The queue with `botId` sitting out until `until` (null: back in). */
const withSitOut = (members: Member[], botId: string, until: number | null) => members.map((m) => (m.botId === botId ? { ...m, sitsOutUntil: until } : m));

/** The one turn rule: what an event does to a branch's queue, what must be written, and whose turn begins. */
export function transition(state: TurnState, event: TurnEvent, now: number, timeoutMs: number): Transition {
  const { members } = state;
  switch (event.type) {
    case "submit": {
      const { writer } = event;
      if (!inTurnMode(state, writer.type)) return unchanged(state);
      if (!mayWrite(state, writer.id)) {
        const me = members.find((m) => m.botId === writer.id);
        const wait = estimatedWait(state, writer.id, timeoutMs, now);
        const sitsOutUntil = me && sitsOut(me, now) ? me.sitsOutUntil : null;
        return { ok: false, refusal: { reason: "not_your_turn", queued: !!me, current: state.current, estimatedWait: wait, sitsOutUntil } };
      }
      // A writer sitting out whose limit let it write after all (raised since) is back in: its write ends its sitting out.
      const back = sitsOut(members.find((m) => m.botId === writer.id)!, now);
      const queue = back ? withSitOut(members, writer.id, null) : members;
      return passTo(queue, nextAfter(queue, writer.id, now), now, timeoutMs, back ? { sitOut: writer.id, until: null } : null);
    }
    case "join": {
      if (members.some((m) => m.botId === event.member.botId)) return unchanged(state);
      const joined = [...members, event.member];
      const add = { add: event.member };
      if (state.current) return { ok: true, state: { ...state, members: joined }, writes: { member: add, turn: false }, announce: null };
      // Nobody held the turn (an empty queue, or every bot sitting out): the first bot not sitting out takes it.
      return passTo(joined, nextAfter(joined, null, now), now, timeoutMs, add);
    }
    case "leave": {
      if (!members.some((m) => m.botId === event.botId)) return { ok: false, refusal: { reason: "not_queued" } };
      const remaining = members.filter((m) => m.botId !== event.botId);
      const removal = { remove: event.botId };
      if (state.current && state.current !== event.botId) {
        return { ok: true, state: { ...state, members: remaining }, writes: { member: removal, turn: false }, announce: null };
      }
      // The holder leaves: the next bot after it (itself last, so only when no other may take it); nobody held it: the first.
      const next = state.current ? nextAfter(members, event.botId, now) : nextAfter(remaining, null, now);
      return passTo(remaining, next?.botId === event.botId ? null : next, now, timeoutMs, removal);
    }
    case "timeout": {
      // The deadline has come, whatever the clock says: a bot sitting out until then is back.
      const next = nextAfter(members, state.current, Math.max(now, state.deadline ?? now));
      if (!next) return unchanged(state);
      return passTo(members, next, now, timeoutMs, null);
    }
    case "limited": {
      const me = members.find((m) => m.botId === event.botId);
      // Only the holder, or a bot trying while nobody holds the turn, reaches a limit in turn mode; a bot already
      // sitting out at least that long changes nothing (no write, no event, no your_turn).
      if (!me || (state.current ?? event.botId) !== event.botId || (me.sitsOutUntil ?? 0) >= event.until) return unchanged(state);
      const until = event.until;
      const queue = withSitOut(members, event.botId, until);
      return passTo(queue, nextAfter(queue, state.current, now), now, timeoutMs, { sitOut: event.botId, until });
    }
  }
}

/**
 * The queue as reads show it (`GET /branches/{id}`) at `now`: turn mode, the current turn, when the turn resumes
 * while every queued bot sits out, and the members with their order and until when each sits out.
 */
export function queueView(state: TurnState, now: number) {
  const current = holder(state);
  return {
    turn_mode: state.members.length > 0,
    current_turn: current ? { bot_id: current.botId, name: current.name, deadline: isoOrNull(state.deadline) } : null,
    resumes_at: isoOrNull(resumesAt(state)),
    members: state.members.map((m, i) => ({
      bot_id: m.botId,
      name: m.name,
      role: m.role,
      your_turn_order: i + 1,
      sits_out_until: sitsOut(m, now) ? isoOrNull(m.sitsOutUntil) : null,
    })),
  };
}

/** A bot's place in the queue, counted from 1. */
export const turnOrder = (state: TurnState, botId: string) => state.members.findIndex((m) => m.botId === botId) + 1;

export const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
