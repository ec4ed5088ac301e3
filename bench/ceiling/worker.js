export default {
  fetch: () => Response.json({ status: "success", data: { ok: true } }),
};
