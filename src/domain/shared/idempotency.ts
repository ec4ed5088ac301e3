import { and, eq, sql, type SQL } from "drizzle-orm";
import { type Db, rawRun, uniqueViolation } from "../../db/client";
import { idempotencyKeys } from "../../db/schema";

/** A write made with an Idempotency-Key: whose key it is, and the fingerprint of the request. */
export interface IdempotentRequest {
  actorId: string;
  key: string;
  hash: string;
}

/** The response a write answers with, as the route sends it: `{status:'success', data}` under `status`. */
export interface Answer {
  status: number;
  data: unknown;
}

export const answerBody = (data: unknown) => JSON.stringify({ status: "success", data });

/**
 * Thrown when a write's batch failed because its Idempotency-Key was already committed (by an attempt whose
 * answer was lost in a crash): nothing was written twice; the caller replays the stored answer.
 */
export class KeyAlreadyCommitted extends Error {
  constructor() {
    super("This Idempotency-Key was already committed");
    this.name = "KeyAlreadyCommitted";
  }
}

/**
 * The statement recording the key with its answer, for the write's own batch; none without a key.
 * `condition` (`AND …`) records it only if the batch's write happened (a conditional insert may write nothing).
 */
export function recordStatements(db: Db, request: IdempotentRequest | null | undefined, answer: Answer, condition: SQL = sql``) {
  if (!request) return [];
  return [
    rawRun(
      db,
      sql`INSERT INTO idempotency_keys (actor_id, key, hash, status, body, created_at)
      SELECT ${request.actorId}, ${request.key}, ${request.hash}, ${answer.status}, ${answerBody(answer.data)}, ${new Date().toISOString()}
      WHERE 1 ${condition}`,
    ),
  ];
}

/** Same, for an answer only SQL can build (its columns computed in the batch): `status` and `body` are SQL. */
export function recordStatementFromSql(
  db: Db,
  request: IdempotentRequest,
  columns: { status: ReturnType<typeof sql>; body: ReturnType<typeof sql>; from: ReturnType<typeof sql> },
) {
  return rawRun(
    db,
    sql`INSERT INTO idempotency_keys (actor_id, key, hash, status, body, created_at)
    SELECT ${request.actorId}, ${request.key}, ${request.hash}, ${columns.status}, ${columns.body}, ${new Date().toISOString()} ${columns.from}`,
  );
}

/** Runs a write's batch; a batch refused because its key is already recorded becomes `KeyAlreadyCommitted`. */
export async function commit<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (uniqueViolation(err)?.includes("idempotency_keys")) throw new KeyAlreadyCommitted();
    throw err;
  }
}

/** The answer committed under a key, to replay it. */
export async function committedAnswer(db: Db, request: IdempotentRequest) {
  const [row] = await db
    .select({ hash: idempotencyKeys.hash, status: idempotencyKeys.status, body: idempotencyKeys.body })
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.actorId, request.actorId), eq(idempotencyKeys.key, request.key)))
    .limit(1);
  return row ?? null;
}
