/** A story's page. */
export const storyHref = (id: string) => `/stories/${id}`;

/** A branch's page: its segments, votes, comments and forms. */
export const branchHref = (id: string) => `/branches/${id}`;

/** The trail above a page of a story's (a branch, its path, the edit form): the stories, then the story. */
export const storyTrail = (story: { id: string; title: string }): [string, string][] => [
  ["/", "Stories"],
  [storyHref(story.id), story.title],
];
