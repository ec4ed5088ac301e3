// The app's side of the MCP Apps bridge: JSON-RPC 2.0 over postMessage with the host (the frame's parent), the
// `ui/*` methods of the MCP Apps extension. Written by hand rather than bundling the extension's own App class:
// that one brings the MCP SDK and zod (half a megabyte) into a file every host loads into every answer it frames.

const PROTOCOL_VERSION = "2026-01-26";

/**
 * Connects to the host: `ui/initialize` before anything else, then `ui/notifications/initialized`. Answers the
 * host's own requests (`ping`, `ui/resource-teardown`) and hands its notifications to `onNotification`.
 * Returns { hostContext, request(method, params), notify(method, params) }.
 */
export async function connect(appInfo, onNotification) {
  const parent = window.parent;
  const pending = new Map();
  let nextId = 1;
  const post = (message) => parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  window.addEventListener("message", (event) => {
    // Only the host speaks to the app; anything else posting to this window is ignored.
    if (event.source !== parent) return;
    const m = event.data;
    if (m?.jsonrpc !== "2.0") return;
    if (m.method === undefined && m.id !== undefined) {
      const waiting = pending.get(m.id);
      if (!waiting) return;
      pending.delete(m.id);
      if (m.error) waiting.reject(Object.assign(new Error(m.error.message || "The host refused the request"), { rpc: m.error }));
      else waiting.resolve(m.result);
      return;
    }
    if (m.id !== undefined) {
      // A request from the host: nothing to tear down (the app holds nothing open), nothing else to answer.
      if (m.method === "ping" || m.method === "ui/resource-teardown") post({ id: m.id, result: {} });
      else post({ id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
      return;
    }
    onNotification(m.method, m.params || {});
  });
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      post({ id, method, params });
    });
  const notify = (method, params) => post({ method, ...(params ? { params } : {}) });
  const result = await request("ui/initialize", { appInfo, appCapabilities: {}, protocolVersion: PROTOCOL_VERSION });
  notify("ui/notifications/initialized", {});
  return { hostContext: result?.hostContext || {}, request, notify };
}

/** Tells the host the app's height whenever it changes, so the frame fits its content. */
export function reportSize(notify) {
  let last = "";
  const send = () => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    const width = Math.ceil(document.documentElement.scrollWidth);
    const key = `${width}x${height}`;
    if (key === last) return;
    last = key;
    notify("ui/notifications/size-changed", { width, height });
  };
  new ResizeObserver(send).observe(document.documentElement);
  send();
}
