// The test host's page script (bundled by test/browser/mcp-app.mjs with esbuild): an MCP host as the MCP Apps
// extension's own AppBridge plays it. It finds the tool's app (`_meta.ui.resourceUri` in tools/list), reads the
// resource, frames its HTML in a sandboxed frame (scripts only, an opaque origin) under a Content-Security-Policy
// built from the resource's `_meta.ui.csp` (as hosts do), makes the model's tool call, and hands the app the call's
// input and result over the `ui/*` bridge; the app's own tools/call go to the host's server, which holds the
// person's token and forwards them to Storyloom's /mcp.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const q = new URLSearchParams(location.search);
const as = q.get("as") ?? "writer";
const tool = q.get("tool") ?? "read_branch";
const args = JSON.parse(q.get("args") ?? "{}");
/** What of the result the host hands on: both (as the spec has it), or one (ChatGPT's structured content, Claude's text). */
const deliver = q.get("deliver") ?? "both";

async function rpc(method, params = {}) {
  const res = await fetch("/rpc", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ as, method, params }) });
  const answer = await res.json();
  if (answer.error) throw new Error(answer.error.message);
  return answer.result;
}

/** The frame's policy from the resource's: nothing but its own inline script and styles, plus what it declared. */
function policyOf(csp = {}) {
  const list = (xs) => (xs?.length ? ` ${xs.join(" ")}` : "");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline'${list(csp.resourceDomains)}`,
    `style-src 'unsafe-inline'${list(csp.resourceDomains)}`,
    `img-src data:${list(csp.resourceDomains)}`,
    `font-src${list(csp.resourceDomains) || " 'none'"}`,
    `connect-src${list(csp.connectDomains) || " 'none'"}`,
    `frame-src${list(csp.frameDomains) || " 'none'"}`,
    `base-uri${list(csp.baseUriDomains) || " 'none'"}`,
  ].join("; ");
}

async function main() {
  const { tools } = await rpc("tools/list");
  const described = tools.find((t) => t.name === tool);
  const uri = described?._meta?.ui?.resourceUri;
  if (!uri) throw new Error(`${tool} has no app`);
  const { contents } = await rpc("resources/read", { uri });
  const resource = contents[0];
  if (resource.mimeType !== "text/html;profile=mcp-app") throw new Error(`the app is ${resource.mimeType}`);
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policyOf(resource._meta?.ui?.csp)}">`;
  const html = resource.text.replace("<head>", `<head>${meta}`);
  // The model's call, whose answer the app shows.
  const result = await rpc("tools/call", { name: tool, arguments: args });
  window.__toolResult = result;

  const frame = document.getElementById("app");
  const context = { theme: q.get("theme") ?? "light", displayMode: "inline", platform: "web", toolInfo: { tool: described } };
  // The bridge keeps the context it was given and sends what changed: it gets a copy, never mutated here.
  const bridge = new AppBridge(null, { name: "Storyloom test host", version: "1.0.0" }, { serverTools: {} }, { hostContext: { ...context } });
  bridge.oncalltool = (params) => rpc("tools/call", params);
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
  };
  bridge.oninitialized = async () => {
    window.__initialized = true;
    await bridge.sendToolInput({ arguments: args });
    const handed =
      deliver === "structured"
        ? { content: [], structuredContent: result.structuredContent }
        : deliver === "content"
          ? { content: result.content, ...(result.isError ? { isError: true } : {}) }
          : result;
    await bridge.sendToolResult(handed);
  };
  window.__setTheme = (theme) => {
    context.theme = theme;
    bridge.setHostContext({ ...context });
  };
  // Listening before the frame loads: the app's `ui/initialize` is the first thing it says.
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
}

main().catch((err) => {
  document.getElementById("host-error").textContent = `host: ${err.message}`;
});
