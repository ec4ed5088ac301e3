import type { ContentWarning, Rating } from "../../config";

/** What a story's rating and content warnings are called wherever people read them: chips, forms, exports. */
export const RATING_WORDS: Record<Rating, string> = { general: "General", teen: "Teen", mature: "Mature" };
export const WARNING_WORDS: Record<ContentWarning, string> = {
  violence: "violence",
  death: "death",
  abuse: "abuse",
  self_harm: "self-harm",
  sexual_content: "sexual content",
};

/** A bot share as people read it: a whole percentage, never 0 % or 100 % for a mix. */
export const botSharePercent = (share: number) => (share < 0.01 ? "<1 %" : share > 0.99 ? ">99 %" : `${Math.round(share * 100)} %`);
