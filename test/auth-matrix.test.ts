import { beforeAll, describe, expect, it } from "vitest";
import { ACCESS, KINDS, NOT_CREDENTIALS, freshCredentials, PROTECTED, type ProtectedRoute, type World, buildWorld, listed } from "./auth-matrix";
import { type CallOptions, call, expectError } from "./helpers";

let w: World;
beforeAll(async () => {
  w = await buildWorld();
});

const send = (r: ProtectedRoute, options: CallOptions = {}) => call(r.path(w) + (r.query ?? ""), { method: r.method, body: r.body?.(w), ...options });

describe("the auth matrix", () => {
  it("lists every route the OpenAPI document marks as needing a credential", async () => {
    const doc = (await call("/openapi.json")).body;
    const secured = Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
      Object.entries<any>(ops)
        .filter(([, op]) => op.security?.length)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    const listedRoutes = PROTECTED.filter((r) => !r.credentialOptional).map((r) => `${r.method} ${r.route}`);
    expect(listedRoutes.sort()).toEqual(secured.sort());
  });
});

for (const r of PROTECTED) {
  const allowed: readonly string[] = ACCESS[r.access];
  const refused = KINDS.filter((k) => !allowed.includes(k));
  const strangers = KINDS.filter((k) => k !== "admin JWT" && allowed.includes(k)) as (keyof World["someoneElse"])[];
  describe(`${r.method} ${r.route}${r.query ?? ""}: ${r.access}${r.owner ? `, and only ${r.owner}` : ""}`, () => {
    it("401 UNAUTHORIZED without a credential", async () => {
      expectError(await send(r), 401, "UNAUTHORIZED");
    });

    it("401 with a garbage bearer: UNAUTHORIZED for a non-Bearer header or an unknown slk_/slt_ credential, AUTH_INVALID_TOKEN for a non-JWT", async () => {
      for (const bad of NOT_CREDENTIALS) {
        const res = await send(r, { token: bad.token, headers: bad.headers });
        expect(res.body?.error?.code, `${bad.what}: ${res.text}`).toBe(bad.code);
        expectError(res, 401, bad.code);
      }
    });

    if (refused.length) {
      it(`403 FORBIDDEN for a ${listed(refused)}`, async () => {
        for (const kind of refused) {
          const res = await send(r, { token: w.credentials[kind] });
          expect(res.body?.error?.code, `${kind}: ${res.text}`).toBe("FORBIDDEN");
          expectError(res, 403, "FORBIDDEN");
        }
      });
    }

    if (r.owner) {
      it(`403 PERMISSION_DENIED for anyone but ${r.owner}, with a ${listed(strangers)}`, async () => {
        for (const kind of strangers) {
          const res = await send(r, { token: w.someoneElse[kind] });
          expect(res.body?.error?.code, `${kind}: ${res.text}`).toBe("PERMISSION_DENIED");
          expectError(res, 403, "PERMISSION_DENIED");
        }
      });
    }

    it(`lets a ${listed(allowed)} through: ${r.through.status} for ${r.through.because}`, async () => {
      const credentials = r.through.fresh ? await freshCredentials() : w.credentials;
      for (const kind of allowed) {
        const res = await call(r.through.path(w), { method: r.method, body: r.through.body?.(), token: credentials[kind as keyof World["credentials"]] });
        expect(res.status, `${kind} → ${res.text.slice(0, 200)}`).toBe(r.through.status);
      }
    });
  });
}
