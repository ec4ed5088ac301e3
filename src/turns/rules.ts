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
}

/** A branch's queue in join order, whose turn it is, and when that turn runs out (epoch ms). */
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
  /** The current turn's deadline has passed. */
  | { type: "timeout" }
  /** A bot was refused by a rate limit: if it holds the turn, the turn passes at once. */
  | { type: "limited"; botId: string };

export type Refusal =
  /** A bot in turn mode writing out of turn (or without having joined: `estimatedWait` null). */
  { reason: "not_your_turn"; queued: boolean; current: string | null; estimatedWait: number | null } | { reason: "not_queued" };

export interface Writes {
  /** A member to add to or remove from the queue. */
  member: { add: Member } | { remove: string } | null;
  /** True when the current turn or its deadline changed. */
  turn: boolean;
}

export type Transition = { ok: true; state: TurnState; writes: Writes; announce: Member | null } | { ok: false; refusal: Refusal };

export const NO_TURN: TurnState = { members: [], current: null, deadline: null };

/** The bot after `botId` in join order, wrapping after the last; the first bot when `botId` is not queued. */
export function nextAfter(members: Member[], botId: string | null): Member | null {
  if (!members.length) return null;
  const i = members.findIndex((m) => m.botId === botId);
  return members[(i + 1) % members.length];
}

/** The member whose turn it is, if any. */
export const holder = (state: TurnState): Member | null => state.members.find((m) => m.botId === state.current) ?? null;

/** A branch is in turn mode while at least one bot is queued; then only bots' writes are ordered. */
export const inTurnMode = (state: TurnState, writerType: string) => writerType === "bot" && state.members.length > 0;

/**
 * Seconds until `botId` may write: what is left of the current turn plus one full timeout for each bot
 * between the current one and the caller. Null for a bot that is not queued; 0 at its own turn.
 */
export function estimatedWait(state: TurnState, botId: string, timeoutMs: number, now: number): number | null {
  const { members } = state;
  const mine = members.findIndex((m) => m.botId === botId);
  if (mine < 0) return null;
  const cur = members.findIndex((m) => m.botId === state.current);
  if (cur < 0 || cur === mine) return 0;
  const left = state.deadline === null ? 0 : Math.max(0, Math.ceil((state.deadline - now) / 1000));
  const between = (mine - cur - 1 + members.length) % members.length;
  return left + between * (timeoutMs / 1000);
}

const unchanged = (state: TurnState): Transition => ({ ok: true, state, writes: { member: null, turn: false }, announce: null });

/** The turn passes to `next` (or to nobody), with a fresh deadline when someone holds it. */
function passTo(members: Member[], next: Member | null, now: number, timeoutMs: number, member: Writes["member"]): Transition {
  const state = { members, current: next?.botId ?? null, deadline: next ? now + timeoutMs : null };
  return { ok: true, state, writes: { member, turn: true }, announce: next };
}

/** The one turn rule: what an event does to a branch's queue, what must be written, and whose turn begins. */
export function transition(state: TurnState, event: TurnEvent, now: number, timeoutMs: number): Transition {
  const { members } = state;
  switch (event.type) {
    case "submit": {
      if (!inTurnMode(state, event.writer.type)) return unchanged(state);
      if (state.current !== event.writer.id) {
        const queued = members.some((m) => m.botId === event.writer.id);
        const wait = estimatedWait(state, event.writer.id, timeoutMs, now);
        return { ok: false, refusal: { reason: "not_your_turn", queued, current: state.current, estimatedWait: wait } };
      }
      return passTo(members, nextAfter(members, event.writer.id), now, timeoutMs, null);
    }
    case "join": {
      if (members.some((m) => m.botId === event.member.botId)) return unchanged(state);
      const joined = [...members, event.member];
      if (members.length) return { ok: true, state: { ...state, members: joined }, writes: { member: { add: event.member }, turn: false }, announce: null };
      return passTo(joined, event.member, now, timeoutMs, { add: event.member });
    }
    case "leave": {
      if (!members.some((m) => m.botId === event.botId)) return { ok: false, refusal: { reason: "not_queued" } };
      const remaining = members.filter((m) => m.botId !== event.botId);
      const removal = { remove: event.botId };
      if (state.current !== event.botId) return { ok: true, state: { ...state, members: remaining }, writes: { member: removal, turn: false }, announce: null };
      return passTo(remaining, remaining.length ? nextAfter(members, event.botId) : null, now, timeoutMs, removal);
    }
    case "timeout": {
      if (!state.current || !members.length) return unchanged(state);
      return passTo(members, nextAfter(members, state.current), now, timeoutMs, null);
    }
    case "limited": {
      if (state.current !== event.botId) return unchanged(state);
      return passTo(members, nextAfter(members, event.botId), now, timeoutMs, null);
    }
  }
}

/** The queue as reads show it (`GET /branches/{id}`): turn mode, the current turn, members with their order. */
export function queueView(state: TurnState) {
  const current = holder(state);
  return {
    turn_mode: state.members.length > 0,
    current_turn: current ? { bot_id: current.botId, name: current.name, deadline: isoOrNull(state.deadline) } : null,
    members: state.members.map((m, i) => ({ bot_id: m.botId, name: m.name, role: m.role, your_turn_order: i + 1 })),
  };
}

/** A bot's place in the queue, counted from 1. */
export const turnOrder = (state: TurnState, botId: string) => state.members.findIndex((m) => m.botId === botId) + 1;

export const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
