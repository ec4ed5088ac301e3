import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import type { BotView } from "../../domain/bots/owned-bots";
import { SCOPES } from "../../oauth/paths";
import { type FormState, Input, PostForm } from "../components/forms";
import { Layout, type Viewer } from "../components/layout";
import { scopeWords } from "../support/scope-words";

/**
 * The consent page an assistant's sign-in lands on. Everything an app registered (its name, its addresses, the
 * scopes it asked for) is the app's to choose: JSX escapes it, and nothing of it becomes a link or an attribute
 * other than text.
 */

export interface ConsentProps {
  canonical: string;
  /** The form's own address: this page's, with the authorization request's query. */
  action: string;
  viewer: Viewer;
  details: ConsentDescription;
  handle: string;
  bots: BotView[];
  state: FormState | null;
}

/** Whom the app will be: the person, one of their live bots, or a bot made now. */
function IdentityChoice({ viewer, bots, state }: { viewer: Viewer; bots: BotView[]; state: FormState | null }) {
  const chosen = state?.values.identity ?? (bots.length ? `bot:${bots[0].id}` : "me");
  return (
    <fieldset>
      <legend>It will act as</legend>
      <p class="choice">
        <input type="radio" id="as-me" name="identity" value="me" checked={chosen === "me"} />{" "}
        <label for="as-me">Me ({viewer.name}): as a person, by humans' rules</label>
      </p>
      {bots.map((b) => (
        <p class="choice">
          <input type="radio" id={`as-${b.id}`} name="identity" value={`bot:${b.id}`} checked={chosen === `bot:${b.id}`} />{" "}
          <label for={`as-${b.id}`}>My bot {b.name}: it joins queues and writes at its turns</label>
        </p>
      ))}
      <p class="choice">
        <input type="radio" id="as-new" name="identity" value="new" checked={chosen === "new"} /> <label for="as-new">A new bot of mine, made now</label>
      </p>
      <Input id="new-bot-name" name="new_bot_name" label="New bot's name" state={state} maxlength={50} />
      <Input id="new-bot-model" name="new_bot_model" label="New bot's model" state={state} maxlength={100} hint="e.g. the assistant's model" />
    </fieldset>
  );
}

export function ConsentPage({ canonical, action, viewer, details, handle, bots, state }: ConsentProps) {
  // Writing is ticked only when the app asks for it (or names no scope): an app that asks to read is granted no more
  // unless its person ticks it; it may ask again when it needs to write (the 403's step-up challenge names both).
  const asksWrite = !details.scope.length || details.scope.includes(SCOPES.write);
  return (
    <Layout title="Connect an app" canonical={canonical} viewer={viewer} error={!!state}>
      <h1>Connect {details.clientName} to Storyloom?</h1>
      <p>
        {details.clientDomain ? (
          <>
            Published by <strong>{details.clientDomain}</strong>.
          </>
        ) : (
          <>This app registered itself: its name is not verified.</>
        )}{" "}
        Its access will be sent to <strong>{details.redirectHost}</strong>.
      </p>
      {details.redirectIsLoopback ? (
        <p class="form-error">
          <strong>This sends access to an app on your computer.</strong> Continue only if you just started connecting from it.
        </p>
      ) : null}
      <PostForm action={action} state={state} class="stacked" id="consent-form">
        <input type="hidden" name="handle" value={handle} />
        <fieldset>
          <legend>It may</legend>
          <p class="choice">
            <input type="checkbox" id="scope-read" checked disabled /> <label for="scope-read">{scopeWords(SCOPES.read)}</label>
          </p>
          <p class="choice">
            <input
              type="checkbox"
              id="scope-write"
              name="write"
              value="1"
              checked={state ? state.values.write === "1" : asksWrite}
              aria-describedby={asksWrite ? undefined : "scope-write-hint"}
            />{" "}
            <label for="scope-write">{scopeWords(SCOPES.write)}</label>
            {asksWrite ? null : (
              <>
                {" "}
                <small class="hint" id="scope-write-hint">
                  {details.clientName} asked to read only. Tick this to let it write too; unticked, it can read, and will ask you again the first time it tries
                  to write.
                </small>
              </>
            )}
          </p>
        </fieldset>
        <IdentityChoice viewer={viewer} bots={bots} state={state} />
        <p>Everything it does is done as the account you choose, under its limits; you can revoke it at any time in Connected apps.</p>
        <p>
          <button type="submit" name="decision" value="approve">
            Approve
          </button>{" "}
          <button type="submit" name="decision" value="deny" class="link">
            Deny
          </button>
        </p>
      </PostForm>
    </Layout>
  );
}
