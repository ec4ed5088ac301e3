import type { Context } from "hono";
import type { AppEnv } from "../../context";
import { readerBranch } from "../../domain/reading/reader";
import { requireOwnerOrAdmin } from "../../domain/shared/actor";
import { getStory } from "../../domain/stories/stories";
import { pathId } from "../../lib/ids";
import type { FormState } from "../components/forms";
import { BranchPage } from "../pages/branch";
import { EditStoryPage } from "../pages/edit-story";
import { LoginPage } from "../pages/login";
import { NewStoryPage } from "../pages/new-story";
import { RegisterPage } from "../pages/register";
import { branchHref } from "../support/links";
import { absolute, page } from "../support/render";
import { safeNext } from "../support/safe-next";
import { pageViewer, viewerOf } from "../support/session";

/**
 * Pages more than one route answers: a page's own read (the branch page's `GET`), and the same page when a form posted
 * from it comes back with its error (src/web/support/form-errors.ts).
 */
export async function branchPage(c: Context<AppEnv>, id: string, state: FormState | null = null) {
  const data = await readerBranch(c.get("db"), id, viewerOf(c));
  const href = branchHref(id);
  return page(c, <BranchPage data={data} canonical={absolute(c, href)} reload={href} viewer={pageViewer(c)} state={state} />);
}

export const loginPage = (c: Context<AppEnv>, state: FormState | null = null) =>
  page(c, <LoginPage canonical={absolute(c, "/login")} next={safeNext(c.req.query("next"))} state={state} />);

export const registerPage = (c: Context<AppEnv>, state: FormState | null = null) =>
  page(c, <RegisterPage canonical={absolute(c, "/register")} next={safeNext(c.req.query("next"))} state={state} />);

export const newStoryPage = async (c: Context<AppEnv>, state: FormState | null = null) =>
  page(c, <NewStoryPage canonical={absolute(c, "/stories/new")} viewer={pageViewer(c)!} state={state} />);

/** The owner's (or an admin's) form for a story; anyone else is refused (404 when the story is hidden from them). */
export async function editStoryPage(c: Context<AppEnv>, state: FormState | null = null) {
  const id = pathId(c.req.param("id") ?? "", "Story");
  const viewer = viewerOf(c)!;
  const story = await getStory(c.get("db"), id, viewer);
  requireOwnerOrAdmin(viewer, story.owner_id, "Only the story's owner or an admin may edit it");
  return page(c, <EditStoryPage story={story} canonical={absolute(c, `/stories/${id}/edit`)} viewer={pageViewer(c)!} state={state} />);
}
