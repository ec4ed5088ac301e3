import { type Context, Hono } from "hono";
import type { AppEnv } from "../../context";
import { pathId } from "../../lib/ids";
import { callerOf, guestOf } from "../../middleware/caller";
import { type LimitedAction, limitsAndIdempotency } from "../../middleware/limits";
import { emptyReadCacheAfterWrites } from "../../middleware/read-cache";
import { requireStanding } from "../../middleware/standing";
import { failedLoginLimit, registrationLimit } from "../../middleware/subject-limits";
import { loginBody, registerBody } from "../../schemas/auth";
import { branchBody } from "../../schemas/branches";
import { commentBody } from "../../schemas/comments";
import { segmentBody } from "../../schemas/segments";
import { storyPatchBody } from "../../schemas/stories";
import { voteBody } from "../../schemas/votes";
import { logIn, logOut, registerHuman } from "../../usecases/auth";
import { forkBranch } from "../../usecases/branches";
import { addComment } from "../../usecases/community";
import { submitSegment } from "../../usecases/segments";
import { createStory, updateStory } from "../../usecases/stories";
import { castVote } from "../../usecases/community";
import { safeNext } from "../support/safe-next";
import { type Fields, fieldsOf, type Labels, labelsFrom, optional, parseWith, showErrorsIn } from "../support/form-errors";
import { filledSegments, storyFormBody } from "../support/story-form";
import { LABEL_WORDS, labelsOf } from "../support/label-form";
import { branchPage, editStoryPage, loginPage, newStoryPage, registerPage } from "./shared-pages";
import { branchHref } from "../support/links";
import { endSession, formPost, requireSession, startSession, viewerOf } from "../support/session";

/**
 * The web reader's forms: each POST is Origin-checked (`formPost`), needs a session where the API needs a
 * credential, draws on the same limits (`limitsAndIdempotency`), is checked with the API's own body schema and
 * written by the API route's own use case; success is a 303 to the page that shows the result (Post/Redirect/Get),
 * an error the form's page again with the error in words (`showErrorsIn`).
 */
export const writeRoutes = new Hono<AppEnv>();

const see = (c: Context<AppEnv>, path: string) => c.redirect(path, 303);

// ---- accounts ----

/** Logging in and registering answer with the session cookie and go where the person was going. */
function signIn(c: Context<AppEnv>, { access_token }: { access_token: string }) {
  startSession(c, access_token);
  return see(c, safeNext(c.req.query("next")));
}

writeRoutes.get("/login", (c) => loginPage(c));
writeRoutes.get("/register", (c) => registerPage(c));

writeRoutes.post(
  "/register",
  formPost,
  showErrorsIn(() => "register", labelsFrom({ username: "Username", email: "Email", password: "Password" }), registerPage),
  registrationLimit,
  async (c) => signIn(c, await registerHuman(guestOf(c), parseWith(registerBody, { ...(await fieldsOf(c)), user_type: "human" }))),
);

writeRoutes.post(
  "/login",
  formPost,
  showErrorsIn(() => "login", labelsFrom({ email: "Email", password: "Password" }), loginPage),
  failedLoginLimit("email"),
  async (c) => signIn(c, await logIn(guestOf(c), parseWith(loginBody, await fieldsOf(c)))),
);

/** Logging out revokes the session's token on the server, so a copy of the cookie signs nobody in. */
writeRoutes.post("/logout", formPost, async (c) => {
  const viewer = viewerOf(c);
  if (viewer) {
    requireStanding(c, viewer, { evenSuspended: true }); // a suspended account may log out, as over the API
    // A session its standing already refuses (logged out elsewhere, gone) has nothing left to revoke.
    await logOut(callerOf(c), "").catch((err) => (c.get("standing")?.refused ? undefined : Promise.reject(err)));
  }
  endSession(c);
  return see(c, "/");
});

// ---- stories ----

const storyLabels: Labels = (field, index, values) => {
  const [name, i = index] = field.split(".");
  if (name === "initial_segments" && i !== undefined) return filledSegments(values)[Number(i)]?.label ?? "A segment";
  const map: Record<string, string> = {
    title: "Title",
    background: "Background",
    style_rules: "Style rules",
    language: "Language",
    min_length: "Shortest segment",
    max_length: "Longest segment",
    starter: "Opening",
    initial_segments: "Segments 1 to 3",
    ...LABEL_WORDS,
  };
  return map[name] ?? name;
};

writeRoutes.get(
  "/stories/new",
  requireSession(() => "/stories/new"),
  (c) => newStoryPage(c),
);

writeRoutes.post(
  "/stories",
  formPost,
  requireSession(() => "/stories/new"),
  showErrorsIn(() => "story", storyLabels, newStoryPage, "You can write again"),
  limitsAndIdempotency("story"),
  emptyReadCacheAfterWrites,
  async (c) => {
    const story = await createStory(callerOf(c), storyFormBody(await fieldsOf(c)));
    return see(c, `/stories/${story.id}`);
  },
);

const editId = (c: Context<AppEnv>) => `/stories/${c.req.param("id")}/edit`;

writeRoutes.get("/stories/:id/edit", requireSession(editId), (c) => editStoryPage(c));

writeRoutes.post(
  "/stories/:id/edit",
  formPost,
  requireSession(editId),
  showErrorsIn(() => "edit", storyLabels, editStoryPage),
  emptyReadCacheAfterWrites,
  async (c) => {
    const id = pathId(c.req.param("id"), "Story");
    const fields = await fieldsOf(c);
    const body = parseWith(storyPatchBody, {
      title: fields.title,
      background: fields.background,
      style_rules: optional(fields.style_rules) ?? null,
      ...labelsOf(fields),
    });
    await updateStory(callerOf(c), id, body);
    return see(c, `/stories/${id}`);
  },
);

// ---- a branch: write, vote, comment, fork ----

const branchIdOf = (c: Context<AppEnv>) => pathId(c.req.param("branch_id") ?? "", "Branch");

/** A form of the branch page: Origin check, session, its errors shown on the branch page, the action's limits. */
const branchForm = (action: LimitedAction, formOf: (c: Context<AppEnv>, fields: Fields) => string, labels: Record<string, string>) =>
  [
    formPost,
    requireSession((c) => branchHref(c.req.param("branch_id") ?? "")),
    showErrorsIn(
      formOf,
      labelsFrom(labels),
      (c, state) => branchPage(c, branchIdOf(c), state),
      action === "vote" ? "You can try again" : "You can write again",
    ),
    limitsAndIdempotency(action),
    emptyReadCacheAfterWrites,
  ] as const;

writeRoutes.post("/branches/:branch_id/segments", ...branchForm("segment", () => "write", { content: "Next segment" }), async (c) => {
  const id = branchIdOf(c);
  const segment = await submitSegment(callerOf(c), id, parseWith(segmentBody, { content: (await fieldsOf(c)).content }));
  return see(c, `${branchHref(id)}#s-${segment.id}`);
});

const vote = (c: Context<AppEnv>, target_type: "branch" | "segment", target_id: string, fields: Fields) =>
  castVote(callerOf(c), parseWith(voteBody, { target_type, target_id, vote: Number(fields.vote) }));

writeRoutes.post("/branches/:branch_id/votes", ...branchForm("vote", () => "vote-branch", { vote: "Vote" }), async (c) => {
  const id = branchIdOf(c);
  await vote(c, "branch", id, await fieldsOf(c));
  return see(c, branchHref(id));
});

writeRoutes.post(
  "/branches/:branch_id/segments/:segment_id/votes",
  ...branchForm("vote", (c) => `vote-${c.req.param("segment_id")}`, { vote: "Vote" }),
  async (c) => {
    const segmentId = c.req.param("segment_id") ?? "";
    await vote(c, "segment", segmentId, await fieldsOf(c));
    return see(c, `${branchHref(branchIdOf(c))}#s-${segmentId}`);
  },
);

writeRoutes.post(
  "/branches/:branch_id/comments",
  ...branchForm("comment", (_, f) => (f.parent_comment_id ? `reply-${f.parent_comment_id}` : "comment"), { content: "Comment" }),
  async (c) => {
    const id = branchIdOf(c);
    const fields = await fieldsOf(c);
    const body = parseWith(commentBody, { content: fields.content, parent_comment_id: optional(fields.parent_comment_id) });
    const comment = await addComment(callerOf(c), id, body);
    return see(c, `${branchHref(id)}#c-${comment.id}`);
  },
);

writeRoutes.post(
  "/branches/:branch_id/forks",
  ...branchForm("branch", (_, f) => `fork-${f.fork_at_segment_id}`, { title: "Branch title", initial_segment: "First segment" }),
  async (c) => {
    const fields = await fieldsOf(c);
    const body = parseWith(branchBody, {
      title: fields.title,
      fork_at_segment_id: fields.fork_at_segment_id,
      parent_branch_id: branchIdOf(c),
      initial_segment: optional(fields.initial_segment),
    });
    const branch = await forkBranch(callerOf(c), pathId(fields.story_id, "Story"), body);
    return see(c, branchHref(branch.id));
  },
);
