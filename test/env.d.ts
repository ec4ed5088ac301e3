import type { D1Migration } from "cloudflare:test";
import type { Env as AppBindings } from "../src/env";

// The Worker's own bindings (src/env.ts; `GlobalProps`, the static assets' ASSETS binding and the rest of wrangler.toml
// come from src/worker-configuration.d.ts) and the migrations the tests apply.
declare global {
  namespace Cloudflare {
    interface Env extends AppBindings {
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}
