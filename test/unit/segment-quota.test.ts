import { describe, expect, it } from "vitest";
import { type SegmentLimits, type SegmentUsage, refusalOf } from "../../src/domain/stories/segment-quota";

/** The segment limits' pure rule after a refused write: which limit it met and when the writer may write again. */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const limits = (perHour: number, perDay = 100, perBranchPerHour = 2): SegmentLimits => ({ perHour, perDay, perBranchPerHour });
const usage = (hour: number, hourOldest: number | null, day = hour, dayOldest = hourOldest): SegmentUsage => ({
  day,
  dayOldest: dayOldest === null ? null : iso(dayOldest),
  hour,
  hourOldest: hourOldest === null ? null : iso(hourOldest),
  branch: 0,
  branchOldest: null,
});

describe("refusalOf: the limit a refused write met, and when it frees", () => {
  it.each([
    { name: "under every limit: none", use: usage(1, NOW - 60_000), lim: limits(20), kept: null, at: null, code: null },
    {
      name: "the hourly limit: an hour after its oldest row",
      use: usage(20, NOW - 600_000),
      lim: limits(20),
      kept: null,
      at: NOW - 600_000 + HOUR,
      code: "RATE_LIMIT_EXCEEDED",
    },
    {
      name: "two full: the one that frees last (the day)",
      use: usage(20, NOW - 600_000, 100, NOW - HOUR * 5),
      lim: limits(20, 100),
      kept: null,
      at: NOW - HOUR * 5 + DAY,
      code: "DAILY_QUOTA_EXCEEDED",
    },
    {
      name: "a limit of 0 (no row in the window): a window from now",
      use: usage(0, null),
      lim: limits(0),
      kept: null,
      at: NOW + HOUR,
      code: "RATE_LIMIT_EXCEEDED",
    },
    {
      name: "a limit of 0, the writer already sitting out for it: the return kept, not a window from this refusal",
      use: usage(0, null),
      lim: limits(0),
      kept: NOW + 20 * 60_000,
      at: NOW + 20 * 60_000,
      code: "RATE_LIMIT_EXCEEDED",
    },
    {
      name: "a kept return does not shorten a window whose rows free later",
      use: usage(20, NOW - 600_000),
      lim: limits(20),
      kept: NOW + 60_000,
      at: NOW - 600_000 + HOUR,
      code: "RATE_LIMIT_EXCEEDED",
    },
  ])("$name", ({ use, lim, kept, at, code }) => {
    const refusal = refusalOf(use, lim, false, NOW, kept);
    expect(refusal?.writableAt ?? null).toBe(at);
    expect(refusal?.code ?? null).toBe(code);
    if (refusal) expect(refusal.retryAfter).toBe(Math.ceil((at! - NOW) / 1000));
  });

  it("a refusal repeated while the writer sits out for a limit of 0 names the same instant (the room then writes nothing)", () => {
    const first = refusalOf(usage(0, null), limits(0), false, NOW)!;
    const again = refusalOf(usage(0, null), limits(0), false, NOW + 90_000, first.writableAt)!;
    expect(again.writableAt).toBe(first.writableAt);
    expect(again.retryAfter).toBe(HOUR / 1000 - 90);
  });
});
