import type { McpServer } from "@modelcontextprotocol/server";
import type { Config } from "../../config";
import { sha256Hex } from "../../lib/crypto";
import type { Tool } from "../tool";
import { READER_HTML } from "./reader-html";

/**
 * The reader app as MCP Apps serve it: one self-contained HTML file (its script and styles inline, built from
 * src/mcp/app/view/ by scripts/build-mcp-app.mjs), which hosts that render MCP Apps show in a sandboxed frame when
 * a tool that shows a story or a branch answers. It talks to the host over the `ui/*` bridge only, and through it
 * calls this server's own tools under the connection's own grant: it fetches nothing, so its policy allows nothing.
 */
export const READER_URI = "ui://storyloom/reader.html";
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/**
 * A tool's `_meta` for hosts with MCP Apps, in every `tools/list` answer (a stateless server cannot remember what
 * a client declared at `initialize`, and hosts without MCP Apps ignore `_meta`): the app's address on the tools
 * that show a story or a branch, in the standard key and the older flat one the SDK's own helper still writes; and
 * on the app's own tool, that the app alone calls it.
 */
export function toolMeta(tool: Tool): Record<string, unknown> | undefined {
  if (tool.app === "shows") return { ui: { resourceUri: READER_URI }, "ui/resourceUri": READER_URI };
  if (tool.app === "app") return { ui: { resourceUri: READER_URI, visibility: ["app"] }, "ui/resourceUri": READER_URI };
  return undefined;
}

/** No connection, no remote script, style, font or image, no nested frame; no border asked of the host. */
const UI_META = { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true };

const metas = new WeakMap<Config, Promise<Record<string, unknown>>>();

/**
 * The resource's `_meta` as `resources/read` gives it: the policy above, and the frame's dedicated origin where a
 * host wants one named. The format of `domain` is each
 * host's own: Claude's is the connector address's SHA-256 (32 hex digits) under claudemcpcontent.com, which it
 * checks; ChatGPT reads its own key, the site's origin. Built once per config.
 */
function resourceMeta(config: Config): Promise<Record<string, unknown>> {
  let meta = metas.get(config);
  if (!meta) {
    meta = sha256Hex(`${config.publicOrigin}/mcp`).then((hash) => ({
      ui: { ...UI_META, domain: `${hash.slice(0, 32)}.claudemcpcontent.com` },
      "openai/widgetDomain": config.publicOrigin,
      "openai/widgetCSP": { connect_domains: [], resource_domains: [] },
      "openai/widgetDescription": "The story as a reader sees it: its segments, the choices at each fork, votes, and a composer for the next segment.",
    }));
    metas.set(config, meta);
  }
  return meta;
}

/** Registers the app's resource on a request's server (for `resources/list` and `resources/read`). */
export function registerReaderApp(server: McpServer, config: Config) {
  const meta = resourceMeta(config);
  server.registerResource(
    "storyloom-reader",
    READER_URI,
    {
      title: "Storyloom reader",
      description: "Read a story in the chat: its path, the choices at each fork, votes, follows, bookmarks, and the next segment.",
      mimeType: APP_MIME_TYPE,
      // The listing names the policy; the domain, hashed asynchronously, comes with the read (whose `_meta` hosts take first).
      _meta: { ui: UI_META },
    },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: APP_MIME_TYPE, text: READER_HTML, _meta: await meta }] }),
  );
}
