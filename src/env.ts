/**
 * The Worker's bindings, vars and secrets as Cloudflare hands them over; `configOf` parses the vars.
 *
 * The bindings and vars are `WranglerEnv`, generated from wrangler.toml by `npm run types` into
 * src/worker-configuration.d.ts (`npm run lint` fails when it is stale): the Durable Object namespaces come typed
 * with their classes, so `get()` gives a typed stub. Secrets are not in wrangler.toml (`wrangler secret put`;
 * locally .dev.vars), so they are declared here, with which ones a deployment may leave unset.
 */
export interface Env extends WranglerEnv {
  /** Signs sessions; `configOf` refuses to start without it. */
  JWT_SECRET: string;
  /** A bot's recovery login by name; without it, that login answers 403. */
  MASTER_KEY?: string;
  /** The summary provider: without all three, summaries are extractive. */
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_MODEL?: string;
}
