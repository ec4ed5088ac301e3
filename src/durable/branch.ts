import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * One instance per branch (named by the branch id). It serializes the branch's turn queue and its
 * segment submissions; its methods arrive with the stories/branches/segments feature.
 */
export class BranchRoom extends DurableObject<Env> {}
