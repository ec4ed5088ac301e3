import type { Context } from "hono";
import type { AppEnv } from "../context";
import { markGrantUsed } from "../domain/accounts/oauth-grants";
import { inBackground } from "../middleware/background";

/** "Last used" is kept to this precision, so a busy grant costs one D1 write per isolate per interval, not per call. */
export const USE_STAMP_MS = 5 * 60_000;

const stamped = new Map<string, number>();

/**
 * Records that a grant was used (Connected apps' "last used"), after the response and at most once per
 * USE_STAMP_MS in this isolate: the call itself pays no D1 trip for it.
 */
export function stampGrantUse(c: Context<AppEnv>, grantId: string, now = Date.now()) {
  if ((stamped.get(grantId) ?? 0) > now - USE_STAMP_MS) return;
  stamped.set(grantId, now);
  if (stamped.size > 10_000) stamped.clear();
  void inBackground(
    c,
    markGrantUsed(c.env.DB, grantId, new Date(now).toISOString()).catch(() => stamped.delete(grantId)),
  );
}
