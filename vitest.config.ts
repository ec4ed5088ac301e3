import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // Test-only values; they override anything a developer has in .dev.vars.
          bindings: {
            TEST_MIGRATIONS: migrations,
            JWT_SECRET: "test-jwt-secret",
            MASTER_KEY: "test-master-key",
            ALLOW_PRIVATE_WEBHOOKS: "false",
            // A summary provider that exists only in tests, where fetch to it is mocked.
            LLM_BASE_URL: "https://llm.test/v1",
            LLM_API_KEY: "test-llm-key",
            LLM_MODEL: "test-model",
            LLM_TIMEOUT_MS: "300",
            WEBHOOK_TIMEOUT_MS: "300",
            TURN_TIMEOUT_SECONDS: "3600",
          },
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/setup/apply-migrations.ts"],
      testTimeout: 30_000,
    },
  };
});
