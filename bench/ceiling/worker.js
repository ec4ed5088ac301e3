// Two local ceilings: GET / answers at once; GET /d1 makes one D1 round trip first (a read that must reach D1).
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/d1") {
      const row = await env.DB.prepare("SELECT 1 AS ok").first();
      return Response.json({ status: "success", data: { ok: row.ok === 1 } });
    }
    return Response.json({ status: "success", data: { ok: true } });
  },
};
