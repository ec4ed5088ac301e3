// The SQL of the bench's reads that reach D1, as Storyloom runs it, for their ceiling (bench/ceiling/worker.js,
// `GET /api/v1/d1/{name}`), which runs the same statements with the same binds through raw D1 over a copy of the same
// database. Each is taken from the domain read the route calls, run with a D1 that records what it is given and answers
// nothing: the text follows the code, and no copy of it is kept here. Loaded by bench/lib.mjs with tsx.
import { getDb } from "../src/db/client";
import { runRead } from "../src/db/client";
import { searchRead } from "../src/domain/discovery/search";
import { listSegments } from "../src/domain/stories/segments";
import { listStories } from "../src/domain/stories/stories";

/** A statement as D1 takes it. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** A page's values as the case's route used them (its answer's `pagination`). */
interface Page {
  limit: number;
  offset: number;
}

const ANSWERED = new Error("recorded");

/** The statements `read` sends in its first round trip (one, or a batch's), recorded and never run. */
async function statementsOf(read: (db: ReturnType<typeof getDb>) => Promise<unknown>): Promise<Statement[]> {
  const statements: Statement[] = [];
  const stop = async () => {
    throw ANSWERED;
  };
  const d1 = {
    prepare: (sql: string) => {
      const statement = {
        bind: (...params: unknown[]) => {
          statements.push({ sql, params });
          return statement;
        },
        all: stop,
        raw: stop,
        first: stop,
        run: stop,
      };
      return statement;
    },
    batch: stop,
  };
  try {
    await read(getDb(d1 as unknown as D1Database));
  } catch (e) {
    // Drizzle wraps what the driver threw.
    if (e !== ANSWERED && (e as Error).cause !== ANSWERED) throw e;
  }
  if (!statements.length) throw new Error("the read sent no statement");
  return statements;
}

/** No filter of `GET /stories`: what the uncached cases ask for. */
const UNFILTERED = { tags: [], excludeTags: [], ratings: [], authorships: [] };

/**
 * The uncached cases' statements, by the name the ceiling serves them under: an anonymous reader's page of a branch's
 * segments (`GET /branches/{id}/segments`), a page of stories (`GET /stories`) and a search's counts and page
 * (`GET /search?q=…`: its one D1 statement, before the search shards are asked; the ceiling runs it alone).
 */
export async function d1Reads(v: { branchId: string; segments: Page; stories: Page & { status: "active" | "archived" }; search: Page & { q: string } }) {
  return {
    segments: await statementsOf((db) => listSegments(db, v.branchId, v.segments.limit, v.segments.offset, null)),
    stories: await statementsOf((db) =>
      listStories(db, { ...UNFILTERED, status: v.stories.status, sort: "new", limit: v.stories.limit, offset: v.stories.offset }),
    ),
    search: await statementsOf((db) =>
      runRead(db, searchRead(db, { ...UNFILTERED, q: v.search.q, type: "all", status: "active", limit: v.search.limit, offset: v.search.offset }, null, true)),
    ),
  };
}
