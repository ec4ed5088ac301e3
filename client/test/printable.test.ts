import { describe, expect, it } from "vitest";
import { printable } from "../bot/printable";

/** What the reference bot prints: nothing that drives or rearranges the operator's terminal. */
describe("printable", () => {
  it.each([
    ["The tide", "The tide"],
    ["潮汐 🐉👩‍🚀 مرحبا", "潮汐 🐉👩‍🚀 مرحبا"],
    ["\u001b]0;owned\u0007The tide", "]0;ownedThe tide"],
    ["\u001b[2J\u001b[HThe tide", "[2J[HThe tide"],
    ["The\u0000 tide\u007f", "The tide"],
    ["\u009b31mred", "31mred"],
    ["line one\nline two\r\nthree\tfour", "line one line two  three four"],
    ["fake\rreal", "fake real"],
    ["\u202eedit\u202c \u2066x\u2069", "edit x"],
    ["", ""],
  ])("%j → %j", (text, expected) => {
    expect(printable(text)).toBe(expected);
  });

  it("leaves no control character at all", () => {
    const every = Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)).join("");
    expect(printable(every)).not.toMatch(/\p{Cc}/u);
  });
});
