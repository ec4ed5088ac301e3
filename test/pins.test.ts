import { describe, expect, it } from "vitest";
import { call, expectError, storyWithSegments } from "./helpers";

describe("a story's pins", () => {
  it("owner creates pins (201, defaults announcement/active); GET lists active ones; the story shows them", async () => {
    const { owner, story } = await storyWithSegments();
    const p1 = await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "Welcome", content: "Be kind." } });
    expect(p1.status).toBe(201);
    expect(p1.body.data).toEqual({
      id: expect.any(String),
      story_id: story.id,
      title: "Welcome",
      content: "Be kind.",
      type: "announcement",
      is_active: true,
      created_by: owner.id,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const p2 = (
      await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "Rule", content: "Past tense.", type: "rule", is_active: false } })
    ).body.data;
    const active = (await call(`/stories/${story.id}/pins`)).body.data;
    expect(active).toEqual({ pins: [p1.body.data], count: 1 });
    const all = (await call(`/stories/${story.id}/pins?include_inactive=true`)).body.data;
    expect(all.pins.map((p: any) => p.id)).toEqual([p1.body.data.id, p2.id]);
    expect((await call(`/stories/${story.id}`)).body.data.pins).toEqual([p1.body.data]);
  });

  it("PATCH changes any field; unknown pins and stories are 404, bad fields 400, and an archived story takes no new pin (403)", async () => {
    const { owner, story } = await storyWithSegments();
    const pin = (await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "T", content: "C" } })).body.data;
    const patched = await call(`/stories/${story.id}/pins/${pin.id}`, {
      method: "PATCH",
      token: owner.token,
      body: { is_active: false, type: "context", title: "T2" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: pin.id, is_active: false, type: "context", title: "T2", content: "C" });
    expect((await call(`/stories/${story.id}/pins`)).body.data.count).toBe(0);
    expectError(
      await call(`/stories/${story.id}/pins/${crypto.randomUUID()}`, { method: "PATCH", token: owner.token, body: { is_active: true } }),
      404,
      "NOT_FOUND",
    );
    expectError(await call(`/stories/${story.id}/pins/${pin.id}`, { method: "PATCH", token: owner.token, body: {} }), 400, "VALIDATION_ERROR");
    expectError(await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "T" } }), 400, "VALIDATION_ERROR");
    expectError(await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "T", content: "C", type: "poster" } }), 400, "VALIDATION_ERROR");
    expectError(await call(`/stories/${crypto.randomUUID()}/pins`), 404, "NOT_FOUND");
    expectError(await call(`/stories/${crypto.randomUUID()}/pins`, { token: owner.token, body: { title: "T", content: "C" } }), 404, "NOT_FOUND");
    await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } });
    expectError(await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "T", content: "C" } }), 403, "FORBIDDEN");
  });
});
