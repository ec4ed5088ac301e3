import { env } from "cloudflare:workers";
import type { SQL } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { compileSimple } from "../../src/db/compile";
import type { Writer } from "../../src/domain/shared/actor";
import { segmentEventSql } from "../../src/domain/events/inbox-events";
import { usageSql } from "../../src/domain/stories/segment-quota";
import {
  countedOnBranchSql,
  countedOnStorySql,
  guardedSegmentSql,
  ownerItemSql,
  type Quota,
  segmentWrite,
  writeValues,
} from "../../src/domain/stories/segment-write";
import { insertLog, type NewSegment, segmentLogCountsSql } from "../../src/domain/stories/segments";
import { legacyIndexSql } from "../../src/domain/discovery/search-index";
import type { Subject } from "../../src/domain/standing/rule";

// A room's write runs prepared statements (compiled once per shape, bound per call): each must be, text and
// parameters, the statement its builder makes with the same values, whatever the shape.
const db = getDb(env.DB);
const limits = { perHour: 20, perDay: 100, perBranchPerHour: 2 };

const segment = (author: Writer, n: number): NewSegment => ({
  id: `seg-${n}`,
  branchId: `branch-${n}`,
  storyId: `story-${n}`,
  author,
  content: `text ${n} with a 'quote'`,
  contentLength: 20 + n,
  sequenceOrder: n,
  isStarter: n % 2 === 0,
  createdAt: new Date(Date.UTC(2026, 5, 1, 12, n)).toISOString(),
  parentSegmentId: n > 1 ? `seg-${n - 1}` : null,
  kind: n % 2 === 0 ? "fork" : "continuation",
});

const cases: [string, Subject, Quota | null][] = [
  [
    "a human with a JWT, limits per branch",
    { id: "u1", type: "human", jti: "j1", issuedAt: "2026-05-31T10:00:00.000Z" },
    { limits, perBranch: true, now: Date.UTC(2026, 5, 1) },
  ],
  [
    "a human with an API token, limits in turn mode",
    { id: "u2", type: "human", jti: null, issuedAt: null },
    { limits, perBranch: false, now: Date.UTC(2026, 5, 2) },
  ],
  [
    "a bot with a JWT, in turn mode",
    { id: "b1", type: "bot", jti: "j2", issuedAt: "2026-06-02T23:59:59.999Z" },
    { limits, perBranch: false, now: Date.UTC(2026, 5, 3) },
  ],
  ["a bot with its API key, per branch", { id: "b2", type: "bot", jti: null, issuedAt: null }, { limits, perBranch: true, now: Date.UTC(2026, 5, 4) }],
  ["an admin (no limits)", { id: "a1", type: "admin", jti: "j3", issuedAt: "2026-05-30T00:00:00.000Z" }, null],
];

describe("segmentWrite: prepared statements bind what their builders would", () => {
  it.each(cases)("%s", (_, subject, quota) => {
    // Twice per shape with other values: the second call runs the statement compiled by the first.
    for (const n of [1, 2]) {
      const { values, shape } = writeValues(segment({ id: subject.id, type: subject.type, name: `name ${n}` }, n), subject, quota, {
        collapseMs: 600_000,
        itemsPerAccount: 1000,
      });
      const write = segmentWrite(db, { values, shape });
      const built: SQL[] = [
        guardedSegmentSql(values, shape),
        insertLog(values),
        ...segmentLogCountsSql(values),
        countedOnBranchSql(values),
        countedOnStorySql(values),
        legacyIndexSql(values),
        ...ownerItemSql(values),
        segmentEventSql(values),
      ];
      expect(write.statements).toHaveLength(built.length);
      write.statements.forEach((statement, i) => {
        const { sql: text, params } = statement.getQuery();
        expect({ sql: text, params }).toEqual(compileSimple(built[i]));
      });
      if (quota) {
        const usage = compileSimple(usageSql(values));
        expect(usage, "the usage statement compiles").not.toBeNull();
        expect(write.usage?.getQuery()).toMatchObject(usage!);
      } else expect(write.usage).toBeNull();
    }
  });
});
