import { nameKey } from "../src/lib/names";
import { hashPassword } from "../src/lib/password";

const quote = (value: string) => `'${value.replace(/'/g, "''")}'`;

export interface AdminInput {
  username: string;
  email: string;
  password: string;
}

/** The INSERT that creates an admin account (`admin-<suffix>` id) with a password hashed as the API does. */
export async function adminInsertSql(input: AdminInput): Promise<{ id: string; sql: string }> {
  if (input.password.length < 8) throw new Error("password must be at least 8 characters");
  const id = `admin-${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const username = input.username.normalize("NFC");
  const values = [id, username, nameKey(username), input.email, await hashPassword(input.password), "admin", new Date().toISOString()];
  const sql = `INSERT INTO users (id, username, username_key, email, password_hash, user_type, created_at) VALUES (${values.map(quote).join(", ")});`;
  return { id, sql };
}
