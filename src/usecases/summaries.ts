import * as domain from "../domain/community/summaries";
import type { Caller } from "./caller";

/**
 * A branch's summary, the writes: regenerated (`POST …/summary`, `GET …/summary?force_refresh=true`) or written by
 * hand (`PATCH …/summary`). Reading it is a domain read (`getSummary`).
 */

/** Regenerates the summary with the configured language model, else extractively; a hand-written one stays unless the caller may replace it. */
export const regenerateSummary = ({ db, config, actor }: Caller, branchId: string) => domain.generateSummary(db, config.llm, branchId, actor);

/** The story's owner (or an admin) writes the branch's summary by hand. */
export const writeSummary = ({ db, actor }: Caller, branchId: string, text: string) => domain.writeSummary(db, actor, branchId, text);
