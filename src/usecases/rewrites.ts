import * as domain from "../domain/community/rewrites";
import type { Caller } from "./caller";

/** Proposes a rewrite of a segment (`POST /segments/{id}/rewrites`), its Idempotency-Key recorded in the write's batch. */
export const addRewrite = ({ db, actor, idempotency }: Caller, segmentId: string, input: Parameters<typeof domain.addRewrite>[3]) =>
  domain.addRewrite(db, actor, segmentId, input, idempotency);
