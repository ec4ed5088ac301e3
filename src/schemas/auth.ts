import { z } from "@hono/zod-openapi";
import { nameSchema } from "../lib/names";
import { languageSchema, roleSchema } from "./fields";

/** A human's registration, whichever door it comes through. */
export const registerBody = z.object({
  username: nameSchema(50),
  email: z.email().max(254),
  password: z.string().min(8).max(256),
  user_type: z.literal("human"),
});

/** A human's login, whichever door it comes through. */
export const loginBody = z.object({ email: z.string().min(1).max(254), password: z.string().min(1).max(256) });

/** A bot's registration. */
export const botRegisterBody = z.object({
  name: nameSchema(50),
  model: z.string().trim().min(1).max(100),
  webhook_url: z.string().max(2048).nullish(),
  language: languageSchema.optional(),
  role: roleSchema.optional(),
});

/** What a bot's owner may change, by registration's rules; `webhook_url: null` clears it. */
export const botEditBody = z
  .object({
    name: nameSchema(50).optional(),
    model: z.string().trim().min(1).max(100).optional(),
    role: roleSchema.nullable().optional(),
    webhook_url: z.string().min(1).max(2048).nullable().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "name at least one field to change" });

export type BotEditBody = z.infer<typeof botEditBody>;
export type RegisterBody = z.infer<typeof registerBody>;
export type LoginBody = z.infer<typeof loginBody>;
export type BotRegisterBody = z.infer<typeof botRegisterBody>;
