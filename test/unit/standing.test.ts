import { describe, expect, it } from "vitest";
import { type Expectation, type StandingRow, suspendedNow, verdictOf } from "../../src/domain/standing/rule";

const NOW = "2026-06-01T12:00:00.000Z";
const row = (over: Partial<StandingRow> = {}): StandingRow => ({
  type: "human",
  role: "user",
  suspended_at: null,
  suspended_until: null,
  suspension_reason: null,
  revoked: 0,
  ...over,
});
const suspended = { suspended_at: "2026-05-01T00:00:00.000Z", suspension_reason: "spam" };

describe("suspendedNow", () => {
  it.each([
    ["never suspended", { suspended_at: null, suspended_until: null }, false],
    ["until restored", { suspended_at: "2026-05-01T00:00:00.000Z", suspended_until: null }, true],
    ["until a later time", { suspended_at: "2026-05-01T00:00:00.000Z", suspended_until: "2026-06-02T00:00:00.000Z" }, true],
    ["until a time now past", { suspended_at: "2026-05-01T00:00:00.000Z", suspended_until: "2026-06-01T11:59:59.999Z" }, false],
    ["until exactly now", { suspended_at: "2026-05-01T00:00:00.000Z", suspended_until: NOW }, false],
  ])("%s", (_, fields, expected) => {
    expect(suspendedNow(fields, NOW)).toBe(expected);
  });
});

describe("verdictOf: the one standing rule", () => {
  const cases: [string, StandingRow | null, Expectation, ReturnType<typeof verdictOf>][] = [
    ["in good standing", row(), { claimed: "human" }, { ok: true, type: "human", role: "user" }],
    ["a bot in good standing", row({ type: "bot" }), { claimed: "bot" }, { ok: true, type: "bot", role: "user" }],
    ["the account is gone", null, { claimed: "human" }, { ok: false, code: "UNAUTHORIZED", message: expect.stringContaining("no longer exists") }],
    [
      "the session was logged out",
      row({ revoked: 1 }),
      { claimed: "human" },
      { ok: false, code: "UNAUTHORIZED", message: expect.stringContaining("logged out") },
    ],
    [
      "logged out and suspended: the logout first",
      row({ ...suspended, revoked: 1 }),
      { claimed: "human" },
      { ok: false, code: "UNAUTHORIZED", message: expect.any(String) },
    ],
    [
      "suspended until restored",
      row(suspended),
      { claimed: "human" },
      { ok: false, code: "ACCOUNT_SUSPENDED", message: expect.any(String), details: { until: null, reason: "spam" } },
    ],
    [
      "suspended until later",
      row({ ...suspended, suspended_until: "2026-07-01T00:00:00.000Z" }),
      { claimed: "bot" },
      { ok: false, code: "ACCOUNT_SUSPENDED", message: expect.any(String), details: { until: "2026-07-01T00:00:00.000Z", reason: "spam" } },
    ],
    [
      "a suspension that has ended",
      row({ ...suspended, suspended_until: "2026-05-02T00:00:00.000Z" }),
      { claimed: "human" },
      { ok: true, type: "human", role: "user" },
    ],
    ["a suspended account logging out", row(suspended), { claimed: "human", evenSuspended: true }, { ok: true, type: "human", role: "user" }],
    [
      "logging out a session already logged out, suspended or not",
      row({ ...suspended, revoked: 1 }),
      { claimed: "human", evenSuspended: true },
      { ok: false, code: "UNAUTHORIZED", message: expect.any(String) },
    ],
    ["a demoted admin reads as a human", row(), { claimed: "admin" }, { ok: true, type: "human", role: "user" }],
    [
      "a demoted admin's write composed with an admin's rights",
      row(),
      { claimed: "admin", composed: true },
      { ok: false, code: "AUTH_INVALID_TOKEN", message: expect.any(String), details: { reason: "account_changed" } },
    ],
    ["an admin still an admin writes", row({ type: "admin" }), { claimed: "admin", composed: true }, { ok: true, type: "admin", role: "user" }],
    ["a human promoted to admin acts as one", row({ type: "admin" }), { claimed: "human" }, { ok: true, type: "admin", role: "user" }],
    [
      "an admin-only route, the account no longer an admin",
      row(),
      { claimed: "admin", types: ["admin"] },
      { ok: false, code: "FORBIDDEN", message: expect.any(String) },
    ],
    ["a moderator's route, a moderator", row({ role: "moderator" }), { claimed: "human", moderator: true }, { ok: true, type: "human", role: "moderator" }],
    ["a moderator's route, an admin", row({ type: "admin" }), { claimed: "admin", moderator: true }, { ok: true, type: "admin", role: "user" }],
    [
      "a moderator's route, a moderator demoted",
      row(),
      { claimed: "human", moderator: true },
      { ok: false, code: "FORBIDDEN", message: expect.stringContaining("moderators") },
    ],
    [
      "a moderator's route, a suspended moderator: the suspension first",
      row({ ...suspended, role: "moderator" }),
      { claimed: "human", moderator: true },
      { ok: false, code: "ACCOUNT_SUSPENDED", message: expect.any(String), details: { until: null, reason: "spam" } },
    ],
    // A bot's owner's suspension is the bot's.
    [
      "a bot whose owner is suspended until restored",
      row({ type: "bot", owner_suspended_at: "2026-05-01T00:00:00.000Z", owner_suspended_until: null }),
      { claimed: "bot" },
      { ok: false, code: "ACCOUNT_SUSPENDED", message: expect.stringContaining("owner"), details: { until: null, reason: null, owner_suspended: true } },
    ],
    [
      "a bot whose owner's suspension has ended",
      row({ type: "bot", owner_suspended_at: "2026-05-01T00:00:00.000Z", owner_suspended_until: "2026-05-02T00:00:00.000Z" }),
      { claimed: "bot" },
      { ok: true, type: "bot", role: "user" },
    ],
    [
      "a bot suspended itself and its owner too: its own suspension first",
      row({ type: "bot", ...suspended, owner_suspended_at: "2026-05-01T00:00:00.000Z" }),
      { claimed: "bot" },
      { ok: false, code: "ACCOUNT_SUSPENDED", message: expect.any(String), details: { until: null, reason: "spam" } },
    ],
    [
      "a bot of a suspended owner logging out",
      row({ type: "bot", owner_suspended_at: "2026-05-01T00:00:00.000Z" }),
      { claimed: "bot", evenSuspended: true },
      { ok: true, type: "bot", role: "user" },
    ],
  ];
  it.each(cases)("%s", (_, standing, expectation, verdict) => {
    expect(verdictOf(standing, expectation, NOW)).toEqual(verdict);
  });
});
