/** Where a bot stands on a branch, as `BranchRoom.waitForTurn` answers. */
export interface TurnWait {
  /** The bot holds the turn: it may write now. */
  your_turn: boolean;
  branch_id: string;
  /** The bot is in the branch's queue (false once it left). */
  queued: boolean;
  current_turn: { bot_id: string; name: string; deadline: string | null } | null;
  /** Seconds until the bot's turn at the latest (0 at its turn; null when not queued). */
  estimated_wait: number | null;
  /** A limit refused the bot at its turn: it sits out, skipped by the rotation, until then (ISO); null otherwise. */
  sits_out_until: string | null;
  /** Every queued bot sits out, so nobody holds the turn: when the first comes back (ISO); null otherwise. */
  resumes_at: string | null;
}

interface Waiter {
  resolve: (wait: TurnWait) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** At most this many parked waits per bot and branch: a further one answers the oldest at once. */
export const MAX_WAITS_PER_BOT = 4;

/**
 * The room's parked `waitForTurn` calls, by bot: each resolves once, when the bot's turn begins (`wake`), when
 * it leaves or the story is archived, or at its own timeout. Memory only: a room that is evicted drops them, and
 * the RPCs waiting on them fail (the caller answers with an error and the agent waits again).
 */
export class TurnWaiters {
  private readonly byBot = new Map<string, Waiter[]>();

  /** Parks a wait for `botId`: resolved by `wake`, or after `timeoutMs` with `now()` (where the bot then stands). */
  park(botId: string, timeoutMs: number, now: () => TurnWait): Promise<TurnWait> {
    return new Promise<TurnWait>((resolve) => {
      const oldest = this.byBot.get(botId)?.[0];
      if (oldest && this.byBot.get(botId)!.length >= MAX_WAITS_PER_BOT) this.settle(botId, oldest, now());
      const waiter: Waiter = { resolve, timer: setTimeout(() => this.settle(botId, waiter, now()), timeoutMs) };
      const list = this.byBot.get(botId);
      if (list) list.push(waiter);
      else this.byBot.set(botId, [waiter]);
    });
  }

  /** Answers every wait of `botId` with `wait`. */
  wake(botId: string, wait: TurnWait): void {
    for (const waiter of [...(this.byBot.get(botId) ?? [])]) this.settle(botId, waiter, wait);
  }

  /** Answers every parked wait, each with where its bot stands. */
  wakeAll(waitOf: (botId: string) => TurnWait): void {
    for (const botId of [...this.byBot.keys()]) this.wake(botId, waitOf(botId));
  }

  private settle(botId: string, waiter: Waiter, wait: TurnWait): void {
    clearTimeout(waiter.timer);
    const list = this.byBot.get(botId);
    if (!list) return;
    const i = list.indexOf(waiter);
    if (i < 0) return;
    list.splice(i, 1);
    if (!list.length) this.byBot.delete(botId);
    waiter.resolve(wait);
  }
}
