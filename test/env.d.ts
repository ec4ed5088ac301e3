import type { D1Migration } from "cloudflare:test";
import type { Env as AppBindings } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends AppBindings {
      TEST_MIGRATIONS: D1Migration[];
      /** The static assets (wrangler.toml [assets]); the Worker itself never reads them. */
      ASSETS: Fetcher;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
      durableNamespaces: "BranchRoom" | "AccountGate";
    }
  }
}
