import type { OAuthGrantRow } from "../../db/schema";
import { Fold, type FormState, PostForm } from "../components/forms";
import { Layout, type Viewer, When } from "../components/layout";
import { scopeWords } from "../support/scope-words";

/**
 * "Connected apps". Everything an app registered (its name, its addresses, the scopes it asked for) is the app's to
 * choose: JSX escapes it, and nothing of it becomes a link or an attribute other than text.
 */

export interface ConnectedAppsProps {
  canonical: string;
  viewer: Viewer;
  grants: (OAuthGrantRow & { actorName: string })[];
  state: FormState | null;
}

/**
 * Where an app's access is sent (its redirect URI's host and port, or its scheme for an app's own scheme): what
 * tells two apps of the same name apart, with when each was connected. Text only, as everything an app registered.
 */
function redirectHostOf(uri: string): string {
  const url = URL.canParse(uri) ? new URL(uri) : null;
  return url?.host || url?.protocol || uri;
}

/** "Connected apps": each grant with its app, whom it acts as, what it may do, when made and last used; Revoke. */
export function ConnectedAppsPage({ canonical, viewer, grants, state }: ConnectedAppsProps) {
  return (
    <Layout title="Connected apps" canonical={canonical} viewer={viewer} error={!!state}>
      <h1>Connected apps</h1>
      <p>
        Assistants you connected (ChatGPT, Claude and others): each acts as the account you chose. See also <a href="/me/bots">My bots</a>.
      </p>
      {grants.length ? (
        <ul class="grants">
          {grants.map((g) => (
            <li>
              <article aria-labelledby={`grant-${g.id}`}>
                <h2 id={`grant-${g.id}`}>{g.clientName}</h2>
                <p class="meta">
                  acts as {g.actorType === "bot" ? `the bot ${g.actorName}` : `you (${g.actorName})`} · may {g.scope.split(" ").map(scopeWords).join("; ")} ·
                  connected <When iso={g.createdAt} /> · sends access to <strong>{redirectHostOf(g.redirectUri)}</strong> · last used{" "}
                  {g.lastUsedAt ? <When iso={g.lastUsedAt} /> : "never"}
                </p>
                {/* Asked before it acts, without a script: the first press only opens the question. */}
                <Fold summary={`Revoke ${g.clientName}…`} state={state?.form === `revoke-${g.id}` ? state : null}>
                  <p>
                    {g.clientName} will no longer act as {g.actorType === "bot" ? `the bot ${g.actorName}` : "you"}: its access ends at once, and it must be
                    connected again to come back.
                  </p>
                  <PostForm action={`/me/apps/${g.id}/revoke`} state={state?.form === `revoke-${g.id}` ? state : null} class="inline">
                    <button type="submit">Yes, revoke {g.clientName}</button>
                  </PostForm>
                </Fold>
              </article>
            </li>
          ))}
        </ul>
      ) : (
        <p>None: no app acts for you.</p>
      )}
    </Layout>
  );
}
