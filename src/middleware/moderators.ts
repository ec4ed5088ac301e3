import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { ApiError } from "../lib/errors";
import { actorOf } from "./auth";
import { requireStanding } from "./standing";

/**
 * Admin routes: admins, and humans an admin made moderators; anyone else gets 403 FORBIDDEN. Runs after
 * `auth()`. The role is the account's current one, read with its standing in the request's first D1 trip (no trip
 * of its own): a route behind this refuses before its first trip returns anything, or before its first write.
 */
export const moderatorsOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const actor = actorOf(c);
  if (actor.type === "bot") throw new ApiError("FORBIDDEN", "This endpoint is for moderators");
  requireStanding(c, actor, { moderator: true });
  return next();
};
