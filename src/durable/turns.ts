/** Pure turn-queue rules, kept apart from storage so they read as the spec states them. */

export interface Member {
  botId: string;
  name: string;
  role: string;
  joinSeq: number;
  joinedAt: string;
}

/** The bot after `botId` in join order, wrapping after the last; the first bot when `botId` is not queued. */
export function nextAfter(members: Member[], botId: string | null): Member | null {
  if (!members.length) return null;
  const i = members.findIndex((m) => m.botId === botId);
  return members[(i + 1) % members.length];
}

/**
 * Seconds until `botId` may write: what is left of the current turn plus one full timeout for each bot
 * between the current one and the caller. Null for a bot that is not queued.
 */
export function estimatedWait(
  members: Member[],
  current: string | null,
  deadlineMs: number | null,
  botId: string,
  timeoutSeconds: number,
  nowMs: number,
): number | null {
  const mine = members.findIndex((m) => m.botId === botId);
  if (mine < 0) return null;
  const cur = members.findIndex((m) => m.botId === current);
  if (cur < 0 || cur === mine) return 0;
  const left = deadlineMs === null ? 0 : Math.max(0, Math.ceil((deadlineMs - nowMs) / 1000));
  const between = (mine - cur - 1 + members.length) % members.length;
  return left + between * timeoutSeconds;
}
