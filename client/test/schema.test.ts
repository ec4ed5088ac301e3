import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import committed from "../openapi.json";

it("client/openapi.json (the source of client/src/schema.d.ts) is the document the Worker serves", async () => {
  const live = await (await exports.default.fetch("https://storyloom.test/api/v1/openapi.json")).json();
  expect(
    JSON.stringify(live) === JSON.stringify(committed),
    "The client's types are stale: run `npm run client:generate` and commit client/openapi.json and client/src/schema.d.ts",
  ).toBe(true);
});
