import type { Env } from "../env";

/** The branch's Durable Object, one per branch id. */
export const branchRoom = (env: Env, branchId: string) => env.BRANCH_ROOM.get(env.BRANCH_ROOM.idFromName(branchId));
