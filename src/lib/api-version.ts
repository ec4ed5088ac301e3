/** The API's version: the OpenAPI document's `info.version`, and the MCP server's (what it tells hosts at connection). */
export const API_VERSION = "1.1.1";
