/** "1 segment", "3 segments": a count with its noun (English). */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
