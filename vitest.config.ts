import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

const ALL = ["test/**/*.test.ts", "client/test/**/*.test.ts"];

/**
 * The test files that run in workers of their own (see `projects` below), read from the files themselves:
 * - a file that needs the database to itself (it drops a table, empties the search index, counts or orders everything,
 *   or sweeps every overdue row) says so in a line `// Runs alone (vitest.config.ts): <why>`;
 * - a file that drives `/mcp` with the SDK's client, or uses test/moderation.ts (which keeps such clients in the
 *   module), runs alone too: shared across files, one file's open client was closed or awaited from another file's
 *   request, which workerd refuses.
 */
const ALONE = ["test", "client/test"]
  .flatMap((dir) =>
    readdirSync(path.join(import.meta.dirname, dir), { recursive: true, encoding: "utf8" }).map((name) => `${dir}/${name.split(path.sep).join("/")}`),
  )
  .filter((file) => file.endsWith(".test.ts"))
  .filter((file) => {
    const text = readFileSync(path.join(import.meta.dirname, file), "utf8");
    return /^\/\/ Runs alone\b/m.test(text) || /from "(@modelcontextprotocol\/client|\.\/moderation)"/.test(text);
  })
  .sort();

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // The outside world, for fetches no test intercepts itself: every host answers 200 here, so no test
          // ever resolves a real host name (webhook receivers of bots a test registered, summary providers).
          outboundService: (request: Request) => new Response(`outside world: ${new URL(request.url).host}`, { status: 200 }),
          // Test-only values; they override anything a developer has in .dev.vars.
          bindings: {
            TEST_MIGRATIONS: migrations,
            JWT_SECRET: "test-jwt-secret",
            MASTER_KEY: "test-master-key",
            ALLOW_PRIVATE_WEBHOOKS: "false",
            // Tests read responses, not access logs (test/health.test.ts turns them on where it checks them).
            LOG_REQUESTS: "false",
            // The address tests call the Worker at (test/helpers.ts BASE, test/web.test.ts ORIGIN).
            PUBLIC_ORIGIN: "https://storyloom.test",
            WEBHOOK_TIMEOUT_MS: "300",
            TURN_TIMEOUT_SECONDS: "3600",
            // Tests read their own writes at once; test/edge.test.ts turns the micro-cache on per request.
            READ_CACHE_MS: "0",
            // Likewise a write hands its story to the search queue at once (test/search-shards.test.ts sets a window).
            SEARCH_HAND_OVER_MS: "0",
            // Limits out of the way; test/limits.test.ts sets the real ones per request.
            ...Object.fromEntries(
              ["STORIES", "BRANCHES", "HUMAN_BRANCHES", "JOINS", "SEGMENTS", "SEGMENTS_PER_BRANCH", "VOTES", "COMMENTS"].map((n) => [
                n === "SEGMENTS_PER_BRANCH" ? "LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR" : `LIMIT_${n}_PER_HOUR`,
                "100000",
              ]),
            ),
            LIMIT_SEGMENTS_PER_DAY: "100000",
            ...Object.fromEntries(
              [
                "REWRITES_PER_HOUR",
                "PINS_PER_HOUR",
                "REPORTS_PER_HOUR",
                "SUMMARIES_PER_HOUR",
                "SUMMARIES_PER_BRANCH_PER_HOUR",
                "REGISTRATIONS_PER_ADDRESS_PER_HOUR",
                "LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR",
                "LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR",
                "LOGIN_FAILURES_PER_ADDRESS_PER_HOUR",
                "OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR",
                "OAUTH_FAILURES_PER_ADDRESS_PER_HOUR",
                "OAUTH_TOKEN_FAILURES_PER_CLIENT_ADDRESS_PER_HOUR",
                "OAUTH_TOKEN_FAILURES_PER_ADDRESS_PER_HOUR",
              ].map((n) => [`LIMIT_${n}`, "100000"]),
            ),
          },
        },
      }),
    ],
    test: {
      setupFiles: ["./test/setup/apply-migrations.ts"],
      testTimeout: 30_000,
      // Most files share their workers, and the storage in them, from file to file: each test makes its own accounts
      // and stories, so what another file wrote is only more rows (a fresh worker per file cost a second or more
      // each: about half of `npm test`). The files that need the database to themselves (they drop a table, empty
      // the search index, count or order everything, or sweep every overdue row) run in workers of their own.
      projects: [
        { extends: true, test: { name: "shared", include: ALL, exclude: ALONE, isolate: false } },
        { extends: true, test: { name: "alone", include: ALONE } },
      ],
    },
  };
});
