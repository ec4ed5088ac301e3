// One story's storage in miniature (bench/capacity.mjs): what a segment write costs a SQLite Durable Object when the
// story's content lives there (docs/scale.md, D-SCALE-1). The tables carry the columns the service's own rows do.
import { DurableObject } from "cloudflare:workers";
import { indexText } from "../../src/lib/search-text";

interface Env {
  STORY_STORE: DurableObjectNamespace<StoryStore>;
}

export class StoryStore extends DurableObject<Env> {
  private next = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      const sql = ctx.storage.sql;
      sql.exec(`CREATE TABLE IF NOT EXISTS segments (id TEXT PRIMARY KEY, branch_id TEXT NOT NULL, author_id TEXT NOT NULL,
        author_type TEXT NOT NULL, content TEXT NOT NULL, content_length INTEGER NOT NULL, sequence_order INTEGER NOT NULL,
        created_at TEXT NOT NULL, hidden_at TEXT, UNIQUE (branch_id, sequence_order))`);
      sql.exec(`CREATE TABLE IF NOT EXISTS logs (id TEXT PRIMARY KEY, segment_id TEXT NOT NULL, author_id TEXT NOT NULL,
        author_type TEXT NOT NULL, kind TEXT NOT NULL, created_at TEXT NOT NULL)`);
      sql.exec("CREATE INDEX IF NOT EXISTS logs_author ON logs (author_id, created_at)");
      sql.exec("CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(content, content='', contentless_delete=1, tokenize = 'unicode61 remove_diacritics 2')");
      sql.exec("CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, body TEXT NOT NULL, sent_at TEXT)");
      this.next = (sql.exec("SELECT coalesce(max(sequence_order), 0) AS n FROM segments").one().n as number) + 1;
    });
  }

  /** A segment, its log line, its search row and the outbox row that tells the directory: one transaction. */
  write(content: string) {
    const sql = this.ctx.storage.sql;
    const id = crypto.randomUUID();
    const at = new Date().toISOString();
    const seq = this.next++;
    this.ctx.storage.transactionSync(() => {
      sql.exec("INSERT INTO segments VALUES (?, 'main', 'writer', 'bot', ?, ?, ?, ?, NULL)", id, content, content.split(/\s+/).length, seq, at);
      const { rowid } = sql.exec("SELECT rowid FROM segments WHERE id = ?", id).one() as { rowid: number };
      sql.exec("INSERT INTO logs VALUES (?, ?, 'writer', 'bot', 'segment', ?)", crypto.randomUUID(), id, at);
      sql.exec("INSERT INTO search (rowid, content) VALUES (?, ?)", rowid, indexText(content));
      sql.exec("INSERT INTO outbox (body) VALUES (?)", JSON.stringify({ type: "segment", id, seq, at }));
    });
    return { id, seq };
  }

  noop() {
    return { seq: this.next };
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const [, action, story = "one"] = url.pathname.split("/");
    const stub = env.STORY_STORE.get(env.STORY_STORE.idFromName(story));
    if (action === "write" && request.method === "POST") return Response.json(await stub.write(await request.text()), { status: 201 });
    if (action === "noop") return Response.json(await stub.noop());
    if (action === "health") return new Response("ok");
    return new Response("not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
