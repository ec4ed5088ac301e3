import { SCOPE_WORDS } from "../../oauth/paths";

/** A scope as the consent page and "Connected apps" say it (its name, for a scope without words). */
export const scopeWords = (scope: string) => SCOPE_WORDS[scope] ?? scope;
