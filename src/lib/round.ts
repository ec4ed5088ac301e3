/** Scores are shown to 3 decimals, so float sums (0.3 + 0.5 …) read cleanly. */
export const round3 = (n: number) => Math.round(n * 1000) / 1000;
