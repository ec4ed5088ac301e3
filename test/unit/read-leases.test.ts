import { describe, expect, it } from "vitest";
import { READS_PER_LEASE, ReadLeases } from "../../src/lib/read-leases";

describe("read leases (the anonymous read limit's local allowance)", () => {
  it("a read lease holds ten reads for one address and lapses with its minute", () => {
    const leases = new ReadLeases();
    const t0 = 1_000_000;
    expect(leases.take("a", t0)).toBe(false);
    leases.grant("a", t0);
    for (let i = 1; i < READS_PER_LEASE; i++) expect(leases.take("a", t0 + i)).toBe(true);
    expect(leases.take("a", t0 + 10)).toBe(false);
    expect(leases.take("b", t0)).toBe(false);
    leases.grant("a", t0 + 100);
    expect(leases.take("a", t0 + 100 + 59_999)).toBe(true);
    expect(leases.take("a", t0 + 100 + 60_000)).toBe(false);
  });

  it("read leases stay bounded: expired and spent ones are dropped first when the table is full", () => {
    const leases = new ReadLeases();
    for (let i = 0; i < 10_000; i++) leases.grant(`old${i}`, 0);
    leases.grant("new", 60_000);
    expect(leases.size).toBe(1);
    expect(leases.take("new", 60_001)).toBe(true);
  });
});
