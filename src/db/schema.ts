import { sql } from "drizzle-orm";
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Timestamps are ISO 8601 UTC strings ("2026-01-02T03:04:05.678Z"): they sort as text and are returned as stored.

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    userType: text("user_type", { enum: ["human", "admin"] }).notNull().default("human"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("users_username_lower_unique").on(sql`lower(${t.username})`),
    uniqueIndex("users_email_lower_unique").on(sql`lower(${t.email})`),
  ],
);

export const bots = sqliteTable(
  "bots",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    model: text("model").notNull(),
    status: text("status").notNull().default("active"),
    role: text("role", { enum: ["narrator", "challenger", "voice"] }),
    language: text("language").notNull().default("zh"),
    webhookUrl: text("webhook_url"),
    webhookSecret: text("webhook_secret").notNull(),
    apiKeyHash: text("api_key_hash").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("bots_name_lower_unique").on(sql`lower(${t.name})`),
    uniqueIndex("bots_api_key_hash_unique").on(t.apiKeyHash),
  ],
);

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    expiresAt: text("expires_at").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("api_tokens_token_hash_unique").on(t.tokenHash), index("api_tokens_user_idx").on(t.userId)],
);

export type UserRow = typeof users.$inferSelect;
export type BotRow = typeof bots.$inferSelect;
