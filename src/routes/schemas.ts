import { z } from "@hono/zod-openapi";

/**
 * What only the HTTP routes share: a path parameter, and the errors of a credential. The records and request
 * bodies every door shares are in src/schemas/.
 */

export const idParam = (name: string) =>
  z.object({ [name]: z.string().openapi({ param: { name, in: "path" }, example: "0b6f1c1e-8d3a-4a4e-9d7c-2f1e5b7a9c10" }) });

export const authErrors = ["UNAUTHORIZED", "AUTH_INVALID_TOKEN", "AUTH_EXPIRED_TOKEN", "ACCOUNT_SUSPENDED"] as const;
