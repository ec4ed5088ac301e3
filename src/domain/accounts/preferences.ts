import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { preferences } from "../../db/schema";
import type { Tag } from "../../lib/tag-rule";

/** A reader's preferences for lists, as the API shows them; the defaults (nothing hidden) when never set. */
export interface PreferencesView {
  hide_mature: boolean;
  hidden_tags: string[];
  updated_at: string | null;
}

export const NO_PREFERENCES: PreferencesView = { hide_mature: false, hidden_tags: [], updated_at: null };

/** An account's preferences (a query for a batch; no row: the defaults). */
export const preferencesQuery = (db: Db, accountId: string) =>
  db
    .select({ hide_mature: preferences.hideMature, hidden_tags: preferences.hiddenTags, updated_at: preferences.updatedAt })
    .from(preferences)
    .where(eq(preferences.accountId, accountId))
    .limit(1);

export async function preferencesOf(db: Db, accountId: string): Promise<PreferencesView> {
  const [row] = await preferencesQuery(db, accountId);
  return row ?? NO_PREFERENCES;
}

/** Sets all of an account's preferences (one upsert); the hidden tags are kept as their keys. */
export async function setPreferences(db: Db, accountId: string, prefs: { hide_mature: boolean; hidden_tags: Tag[] }, now: string): Promise<PreferencesView> {
  const row = { accountId, hideMature: prefs.hide_mature, hiddenTags: prefs.hidden_tags.map((t) => t.key), updatedAt: now };
  await db
    .insert(preferences)
    .values(row)
    .onConflictDoUpdate({ target: preferences.accountId, set: { hideMature: row.hideMature, hiddenTags: row.hiddenTags, updatedAt: now } });
  return { hide_mature: row.hideMature, hidden_tags: row.hiddenTags, updated_at: now };
}
