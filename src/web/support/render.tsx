import type { Context } from "hono";
import type { AppEnv } from "../../context";
import { readerBranch } from "../../domain/reading/reader";
import type { ErrorStatus } from "../../lib/errors";
import { LoginPage } from "../pages/login";
import { RegisterPage } from "../pages/register";
import type { FormState } from "../components/forms";
import { NewStoryPage } from "../pages/new-story";
import { EditStoryPage } from "../pages/edit-story";
import { getStory } from "../../domain/stories/stories";
import { requireOwnerOrAdmin } from "../../domain/shared/actor";
import { pathId } from "../../lib/ids";
import { BranchPage } from "../pages/branch";
import { branchHref } from "./links";
import { safeNext } from "./safe-next";
import { pageViewer, viewerOf } from "./session";

/**
 * The absolute address of `path` (which starts with `/`) on the site's configured origin (`PUBLIC_ORIGIN`), never
 * on the request's Host: a page is the same whichever host it was asked for under, so the micro-cache, which
 * does not key on the host, can hand it to any reader.
 */
export const absolute = (c: Context<AppEnv>, path: string) => `${c.get("config").publicOrigin}${path}`;

/** A page as HTML (its Cache-Control is set by the pages' middleware). */
export const page = (c: Context<AppEnv>, html: Parameters<Context<AppEnv>["html"]>[0], status: ErrorStatus | 200 = 200) => c.html(html, status);

/** A page number from a query (`?page=`): a positive integer, at most `max`; anything else is the first page. */
export function positiveInt(value: string | undefined, max: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, max) : 1;
}

/** The pages a form can come back to with its error (src/web/support/form-errors.ts), and their first showing. */
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
