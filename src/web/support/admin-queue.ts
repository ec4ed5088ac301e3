import type { REPORT_TARGETS } from "../../schemas/reports";

/** Where a moderator is: the queue (open or resolved, one kind of target or all) and its page. */
export interface QueueView {
  status: "open" | "resolved";
  targetType: (typeof REPORT_TARGETS)[number] | null;
  page: number;
}

/** The report queue's address for a view (its defaults, open reports of every kind on the first page, left out). */
export const queueHref = (v: Partial<QueueView>) => {
  const q = new URLSearchParams();
  if (v.status === "resolved") q.set("status", "resolved");
  if (v.targetType) q.set("target_type", v.targetType);
  if (v.page && v.page > 1) q.set("page", String(v.page));
  const s = q.toString();
  return s ? `/admin?${s}` : "/admin";
};
