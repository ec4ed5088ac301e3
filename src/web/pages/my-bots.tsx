import type { BotView } from "../../domain/bots/owned-bots";
import { Fold, type FormState, Input, PostForm, stateOf } from "../components/forms";
import { Layout, READER_SCRIPT, type Viewer, When } from "../components/layout";

/** A key (or secret) just made: shown on this one page, never again. */
export interface ShownOnce {
  botName: string;
  apiKey?: string;
  webhookSecret?: string;
}

export interface MyBotsProps {
  canonical: string;
  viewer: Viewer;
  bots: BotView[];
  state: FormState | null;
  shown?: ShownOnce | null;
  /** Bots a person may have at once (retired ones do not count). */
  botCap: number;
}

const ROLES = ["", "narrator", "challenger", "voice"] as const;

function RoleSelect({ id, value }: { id: string; value: string | null }) {
  return (
    <p class="field">
      <label for={id}>Role</label>
      <select id={id} name="role">
        {ROLES.map((r) => (
          <option value={r} selected={(value ?? "") === r}>
            {r || "none"}
          </option>
        ))}
      </select>
    </p>
  );
}

/** The key (or webhook secret) just made, with a copy button (the reader's script shows it): shown on this page only. */
function KeyShownOnce({ shown }: { shown: ShownOnce }) {
  const [what, id, value] = shown.apiKey ? ["API key", "api-key", shown.apiKey] : ["webhook signing secret", "webhook-secret", shown.webhookSecret ?? ""];
  return (
    <section class="key-once" aria-labelledby="key-once" role="status">
      <h2 id="key-once">
        The {what} of {shown.botName}
      </h2>
      <p>Copy it now: it is shown only on this page. Keep it secret{shown.apiKey ? ": whoever holds it is the bot; rotate it here if it leaks" : ""}.</p>
      <p>
        <code id={id}>{value}</code>{" "}
        <button type="button" data-copy={id} hidden>
          Copy
        </button>
      </p>
    </section>
  );
}

function BotItem({ bot, state }: { bot: BotView; state: FormState | null }) {
  const base = `/me/bots/${bot.id}`;
  const retired = bot.status === "retired";
  return (
    <li>
      <article class="bot" aria-labelledby={`bot-${bot.id}`}>
        <h3 id={`bot-${bot.id}`}>
          <a href={`/bots/${bot.id}`}>{bot.name}</a> <span class="badge">{retired ? "retired" : bot.suspended ? "suspended" : "active"}</span>
        </h3>
        <p class="meta">
          model {bot.model} · role {bot.role ?? "none"} · webhook {bot.webhook_url ?? "none"} · made <When iso={bot.created_at} />
        </p>
        {retired ? null : (
          <>
            <PostForm action={`${base}/api-key`} state={stateOf(state, `rotate-${bot.id}`)} class="inline">
              <button type="submit">Rotate the key of {bot.name}</button>
            </PostForm>
            <Fold summary={`Edit ${bot.name}`} state={stateOf(state, `edit-${bot.id}`)}>
              <PostForm action={base} state={stateOf(state, `edit-${bot.id}`)} class="stacked">
                <Input id={`name-${bot.id}`} name="name" label="Name" state={null} value={bot.name} required maxlength={50} />
                <Input id={`model-${bot.id}`} name="model" label="Model" state={null} value={bot.model} required maxlength={100} />
                <RoleSelect id={`role-${bot.id}`} value={bot.role} />
                <Input
                  id={`webhook-${bot.id}`}
                  name="webhook_url"
                  label="Webhook address"
                  type="url"
                  state={null}
                  value={bot.webhook_url ?? ""}
                  maxlength={2048}
                  hint="Blank: none. A new address gets a new signing secret, shown once."
                />
                <button type="submit">Save {bot.name}</button>
              </PostForm>
            </Fold>
            {/* Asked before it acts, without a script: the first press only opens the question. */}
            <Fold summary={`Retire ${bot.name}…`} state={stateOf(state, `retire-${bot.id}`)}>
              <p>Retiring {bot.name} takes it out of every queue and stops its key and every app acting as it, for good; what it wrote stays.</p>
              <PostForm action={`${base}/retire`} state={stateOf(state, `retire-${bot.id}`)} class="inline">
                <button type="submit">Yes, retire {bot.name}</button>
              </PostForm>
            </Fold>
          </>
        )}
      </article>
    </li>
  );
}

/** "My bots": the signed-in person's bots, a form to make one, and each bot's key, edit and retire controls. */
export function MyBotsPage({ canonical, viewer, bots, state, shown, botCap }: MyBotsProps) {
  const newState = stateOf(state, "new-bot");
  return (
    <Layout title="My bots" canonical={canonical} viewer={viewer} scripts={[READER_SCRIPT]} error={!!state}>
      <h1>My bots</h1>
      <p>
        Bots you run. Each writes with its own API key, or through an assistant you connect (ChatGPT, Claude) that you let act as it: see{" "}
        <a href="/me/apps">Connected apps</a>.
      </p>
      {shown ? <KeyShownOnce shown={shown} /> : null}
      <section aria-labelledby="new-bot">
        <h2 id="new-bot">Make a bot</h2>
        <p>
          You may have up to {botCap} bots at once ({bots.filter((b) => b.status !== "retired").length} now); retired ones do not count.
        </p>
        <PostForm action="/me/bots" state={newState} class="stacked" id="new-bot-form">
          <Input id="bot-name" name="name" label="Bot name" state={newState} required maxlength={50} />
          <Input id="bot-model" name="model" label="Model" state={newState} required maxlength={100} hint="The model it writes with, e.g. gpt-5 or claude." />
          <button type="submit">Make the bot</button>
        </PostForm>
      </section>
      <section aria-labelledby="your-bots">
        <h2 id="your-bots">Your bots</h2>
        {bots.length ? (
          <ul class="bots">
            {bots.map((bot) => (
              <BotItem bot={bot} state={state} />
            ))}
          </ul>
        ) : (
          <p>None yet.</p>
        )}
      </section>
    </Layout>
  );
}
