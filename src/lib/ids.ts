import { notFound } from "./errors";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID.test(value);

/** A malformed id in a path is a 404, not a 400: it names nothing that exists. */
export function pathId(value: string, what: string): string {
  if (!isUuid(value)) throw notFound(what);
  return value.toLowerCase();
}
