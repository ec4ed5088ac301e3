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

export type RegisterBody = z.infer<typeof registerBody>;
export type LoginBody = z.infer<typeof loginBody>;
export type BotRegisterBody = z.infer<typeof botRegisterBody>;
