import { z } from "zod";
import { isPlainName } from "./characters";

/**
 * The key two names are the same by: NFKC (full-width, ligatures and compatibility forms folded) with full
 * Unicode case folding (ß and ss, Σ/σ/ς, Émile and émile, NFC and NFD forms alike). Case folding is done as
 * upper- then lower-casing, which folds the multi-character cases (ß → SS → ss) that lower-casing alone misses.
 */
export const nameKey = (name: string) => name.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFKC");

/** A username or bot name: 1–`max` characters, no control or format characters; stored NFC-normalized. */
export const nameSchema = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine(isPlainName, { message: "must not contain control or format characters (zero-width, bidi overrides)" })
    .transform((v) => v.normalize("NFC"));
