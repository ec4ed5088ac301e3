import { notFound } from "./errors";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID.test(value);

/** How many characters of an id name its story: the UUID's first 8 bytes (`xxxxxxxx-xxxx-4xxx`), version nibble included. */
export const STORY_PREFIX_LENGTH = 18;

/**
 * A new id for a row of a story (a branch, a segment, a comment, a rewrite): a version-4 UUID whose first 8 bytes are
 * the story id's, the other 8 random (the variant bits set), so any id a route names says which story holds its row
 * without a lookup table (docs/decisions.md, D-SCALE-2). 61 random bits remain: ids within one story collide with a
 * chance of about n² / 2^62 (a million rows: 1 in 4.6 million million).
 */
export function idInStory(storyId: string): string {
  const random = crypto.randomUUID();
  return `${storyId.slice(0, STORY_PREFIX_LENGTH).toLowerCase()}${random.slice(STORY_PREFIX_LENGTH)}`;
}

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
