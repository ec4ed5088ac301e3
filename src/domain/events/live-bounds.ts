/**
 * The live stream's bounds, in one place (docs/api.md, "Limits and retries"). A branch holds at most `perBranch` sockets, of which
 * anonymous ones (no verified credential) take at most `anonymousPerBranch`: the rest is kept for signed-in
 * callers, so no crowd of anonymous addresses can lock them out. One address (an IPv6 address by its /64) holds
 * at most `anonymousPerAddress` anonymous sockets and `perAddress` in all, one account `perAccount`: it takes 50
 * addresses to fill the anonymous share, and none can touch the signed-in one.
 */
export const LIVE_SOCKETS = {
  perBranch: 500,
  anonymousPerBranch: 200,
  anonymousPerAddress: 4,
  perAddress: 8,
  perAccount: 8,
} as const;
/** Frames a socket may send (other than `ping`, which the runtime answers without waking the room) per minute. */
export const INBOUND_FRAMES_PER_MINUTE = 5;
export const INBOUND_WINDOW_MS = 60_000;
/** `?after=` replays at most this many segments: one page, one read of the caller's read limit. */
export const REPLAY_LIMIT = 100;
