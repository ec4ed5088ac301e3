/**
 * JSON text SQLite wrote for a value of type `T` (see `jsonRows` in src/db/json-rows.ts), spliced into an answer as it
 * is (`okSpliced`). Parse it to have the value (`value()`), as a door that needs objects does (MCP).
 */
export class JsonText<T> {
  constructor(readonly text: string) {}
  value = (): T => JSON.parse(this.text);
  /** Serialized by `JSON.stringify` (`ok()`, a tool's result) it is its value, never `{"text": …}`. */
  toJSON = (): T => this.value();
}
