import type { Context } from "hono";

/** Lets work finish after the response; awaited instead where the request has no execution context (app.request in tests). */
export async function inBackground(c: Context, work: Promise<unknown>): Promise<void> {
  let ctx: ExecutionContext | undefined;
  try {
    ctx = c.executionCtx as ExecutionContext;
  } catch {
    ctx = undefined;
  }
  if (ctx) ctx.waitUntil(work);
  else await work;
}
