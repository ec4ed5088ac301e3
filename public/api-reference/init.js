// Starts the API reference on /api/v1/docs. A file of its own (not an inline script) so the page's
// Content-Security-Policy can say `script-src 'self'` with no hash, nonce or 'unsafe-inline'.
// The document's address comes from the page (data-url), so the Worker stays the one place that knows it.
(() => {
  var mount = document.getElementById("app");
  Scalar.createApiReference(mount, {
    url: mount.getAttribute("data-url"),
    _integration: "html",
    // Nothing may leave the service's origin: no web fonts from fonts.scalar.com, no request proxy
    // (proxy.scalar.com; "Test Request" calls this same origin directly), no telemetry, no AI agent, and none of
    // the buttons that lead to Scalar's hosted services (MCP generation, the developer toolbar's Share/Deploy).
    withDefaultFonts: false,
    proxyUrl: "",
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
  });
})();
