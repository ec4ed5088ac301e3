import type { FormState } from "../components/forms";

/** The login or register page's address, with where to go after (none when that is the home page). */
export const withNext = (path: string, next: string) => (next === "/" ? path : `${path}?next=${encodeURIComponent(next)}`);

/** What the login and register pages show: their address, where to go after, a refused form's fields and error. */
export interface AccountPageProps {
  canonical: string;
  next: string;
  state: FormState | null;
}
