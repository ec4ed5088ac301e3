import { describe, expect, it } from "vitest";
import { STORY_PREFIX_LENGTH, idInStory, isUuid } from "../../src/lib/ids";

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("idInStory: a story's row id names its story", () => {
  it.each([
    ["a lower-case story id", "0f8fad5b-d9cb-469f-a165-70867728950e"],
    ["an upper-case one (ids are stored lower case)", "7C9E6679-7425-40DE-944B-E07FC1F90AE7"],
    ["one of all f's", "ffffffff-ffff-4fff-bfff-ffffffffffff"],
  ])("%s: a version-4 UUID that begins with the story's first 8 bytes", (_, storyId) => {
    const id = idInStory(storyId);
    expect(id).toMatch(V4);
    expect(isUuid(id)).toBe(true);
    expect(id.slice(0, STORY_PREFIX_LENGTH)).toBe(storyId.slice(0, STORY_PREFIX_LENGTH).toLowerCase());
  });

  it("draws the other 8 bytes at random: 10,000 ids of one story are all different", () => {
    const storyId = crypto.randomUUID();
    const ids = new Set(Array.from({ length: 10_000 }, () => idInStory(storyId)));
    expect(ids.size).toBe(10_000);
  });
});
