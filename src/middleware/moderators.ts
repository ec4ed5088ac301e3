import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { ApiError } from "../lib/errors";
import { actorOf } from "./auth";

/**
 * Admin routes (issue 23): admins, and humans an admin made moderators; anyone else gets 403 FORBIDDEN.
 * Runs after `auth()`. Interim: one look-up of the role; the standing check is to carry it in the request's own
 * round trip.
 */
export const moderatorsOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const actor = actorOf(c);
  const row =
    actor.type === "bot"
      ? null
      : await c.get("db").$client.prepare("SELECT user_type, role FROM users WHERE id = ?").bind(actor.id).first<{ user_type: string; role: string }>();
  if (!row || (row.user_type !== "admin" && row.role !== "moderator")) {
    throw new ApiError("FORBIDDEN", "This endpoint is for moderators");
  }
  return next();
};
