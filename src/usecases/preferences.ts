import { nowIso } from "../db/client";
import * as domain from "../domain/accounts/preferences";
import type { PreferencesBody } from "../schemas/preferences";
import type { Caller } from "./caller";

/** Sets the caller's preferences for lists: `PUT /me/preferences` and the web reader's preferences form. */
export const setPreferences = (caller: Caller, body: PreferencesBody) => domain.setPreferences(caller.db, caller.actor.id, body, nowIso());
