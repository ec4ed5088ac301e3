import { describe, expect, it } from "vitest";
import { call, createStory, registerHuman, unique, words } from "./helpers";
import { ORIGIN, authorize, callTool, connectedApp, exchange, mcpPost, pkce, registerClient, toolResult, workerFetch } from "./oauth-flow";

/** OAuth 2.1 for /mcp (issue 57 §2–§4): discovery, DCR, sign-in → consent → code → token → refresh, and each refusal. */

const get = (path: string) => workerFetch()(`${ORIGIN}${path}`);

describe("discovery", () => {
  it("serves RFC 8414 metadata: the endpoints, PKCE S256 only, DCR, CIMD, the scopes", async () => {
    const res = await get("/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      revocation_endpoint: `${ORIGIN}/oauth/token`,
      code_challenge_methods_supported: ["S256"],
      scopes_supported: ["stories:read", "stories:write"],
      client_id_metadata_document_supported: true,
      protected_resources: [`${ORIGIN}/mcp`],
    });
  });

  it("serves RFC 9728 metadata at the path form and the root form", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(await res.json()).toMatchObject({ resource: `${ORIGIN}/mcp`, authorization_servers: [ORIGIN], scopes_supported: ["stories:read"] });
    }
  });

  it("answers /mcp without a credential 401 with the challenge naming the metadata and the read scope", async () => {
    const res = await mcpPost(null);
    expect(res.status).toBe(401);
    const challenge = res.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`);
    expect(challenge).toContain('scope="stories:read"');
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("sign-in, consent, code, token, refresh (DCR)", () => {
  it("connects as the person: the token calls tools as them; refresh rotates", async () => {
    const person = await registerHuman();
    const story = await createStory(person.token);
    const app = await connectedApp(person.token);
    expect(app.token_type.toLowerCase()).toBe("bearer");
    expect(app.scope.split(" ").sort()).toEqual(["stories:read", "stories:write"]);
    const read = await toolResult(await callTool(app.access_token, "get_story", { story_id: story.id }));
    expect(read.result.isError ?? false, JSON.stringify(read)).toBe(false);
    const wrote = await toolResult(await callTool(app.access_token, "comment", { branch_id: story.main_branch_id, content: "from my assistant" }));
    expect(wrote.result.isError ?? false, JSON.stringify(wrote)).toBe(false);
    const comments = (await call(`/branches/${story.main_branch_id}/comments`)).body.data.comments;
    expect(comments.some((c: any) => c.content === "from my assistant")).toBe(true);

    const refreshed = await (await import("./oauth-flow")).token({
      grant_type: "refresh_token",
      client_id: app.client.client_id,
      refresh_token: app.refresh_token,
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(app.refresh_token);
    const again = await toolResult(await callTool(refreshed.body.access_token, "get_story", { story_id: story.id }));
    expect(again.result.isError ?? false).toBe(false);
  });

  it("connects as a new bot made on the consent page, which then writes its segments", async () => {
    const person = await registerHuman();
    const story = await createStory(person.token);
    const name = unique("assist");
    const app = await connectedApp(person.token, { identity: "new", new_bot_name: name, new_bot_model: "gpt" });
    const mine = (await call("/me/bots", { token: person.token })).body.data.bots;
    expect(mine.map((b: any) => b.name)).toEqual([name]);
    const joined = await toolResult(await callTool(app.access_token, "join_branch", { branch_id: story.main_branch_id }));
    expect(joined.result.isError ?? false, JSON.stringify(joined)).toBe(false);
    const wrote = await toolResult(await callTool(app.access_token, "write_segment", { branch_id: story.main_branch_id, content: words(5) }));
    expect(wrote.result.isError ?? false, JSON.stringify(wrote)).toBe(false);
    const segments = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments;
    expect(segments.at(-1)).toMatchObject({ bot_id: mine[0].id, author_type: "bot", author_name: name });
  });
});

describe("refusals", () => {
  it("a wrong PKCE verifier, a replayed code, an unregistered redirect: refused", async () => {
    const person = await registerHuman();
    const client = await registerClient();
    const { verifier, challenge } = await pkce();
    const code = await authorize({ clientId: client.client_id, session: person.token, challenge });
    const { token } = await import("./oauth-flow");
    const wrong = await token({
      grant_type: "authorization_code",
      client_id: client.client_id,
      code,
      code_verifier: `${verifier}x`,
      redirect_uri: "https://host.example/oauth/callback",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const code2 = await authorize({ clientId: client.client_id, session: person.token, challenge });
    await exchange(client.client_id, code2, verifier);
    const replay = await token({
      grant_type: "authorization_code",
      client_id: client.client_id,
      code: code2,
      code_verifier: verifier,
      redirect_uri: "https://host.example/oauth/callback",
    });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
  });
});
