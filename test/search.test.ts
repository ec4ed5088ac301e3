import { describe, expect, it } from "vitest";
import { call, createStory, registerHuman, submit } from "./helpers";

describe("smoke", () => {
  it("finds", async () => {
    const h = await registerHuman();
    const s = await createStory(h.token, { title: "The Bell Tower", background: "A town of bells where the old bellman rings at dawn.", tags: ["Bells", "魔法"] });
    const zh = await createStory(h.token, {
      title: "魔法师的学徒",
      background: "一个关于魔法师和他的学徒的故事，发生在海边的小镇。",
      language: "zh",
      starter: "很久以前，有一位魔法师住在灯塔里。",
      initial_segments: ["他每天晚上点亮灯塔。", "学徒问他为什么。", "魔法师笑而不答。"],
      min_length: 3,
    });
    await submit(h.token, s.main_branch_id, "The bell rang thrice and the tower shook.");
    for (const q of ["bell", "bell*", "魔法", "魔法师", "魔", "灯塔", "学徒", "bellman rings", '"bell', "AND", "塔里"]) {
      const r = await call(`/search?q=${encodeURIComponent(q)}`);
      console.log(q, r.status, JSON.stringify(r.body.data ?? r.body).slice(0, 1500));
    }
    expect(1).toBe(1);
  });
});
