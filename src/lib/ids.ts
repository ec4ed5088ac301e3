import { notFound } from "./errors";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID.test(value);

/** A malformed id in a path is a 404, not a 400: it names nothing that exists. */
export function pathId(value: string, what: string): string {
  if (!isUuid(value)) throw notFound(what);
  return value.toLowerCase();
}

/** An account's id: a UUID, or the `admin-<suffix>` of an admin made by the operator's script (scripts/admin-sql.ts). */
const ACCOUNT_ID = /^[a-z0-9-]{1,64}$/;

/** An account id from a request, in any letter case, as stored (lower case); a malformed one names nothing: 404. */
export function accountId(value: string): string {
  const id = value.toLowerCase();
  if (!ACCOUNT_ID.test(id)) throw notFound("Account");
  return id;
}
