import { z } from "zod";
import { validationError } from "../lib/errors";
import { fieldIssues } from "../lib/validation";
import { IDEMPOTENCY_KEY } from "../usecases/limits";

/**
 * A tool's arguments: the zod schema they are parsed with (the same schemas as the REST bodies, src/schemas/),
 * advertised to hosts as its JSON Schema, converted once per isolate.
 *
 * The SDK would validate arguments itself and answer a failure with a bare text ("Input validation error: …"); we
 * want the REST error instead (`VALIDATION_ERROR` naming each field, as structured content), so the SDK is given a
 * Standard Schema whose `validate` lets every value through and whose JSON Schema is the zod schema's; the tool
 * parses with zod itself (`parseArguments`). Field descriptions come from zod's `.describe()`.
 */
export interface ToolInput<S extends z.ZodType> {
  schema: S;
  /** What the SDK is given: JSON Schema for `tools/list`, no validation of its own. */
  advertised: {
    readonly "~standard": {
      readonly version: 1;
      readonly vendor: string;
      readonly validate: (value: unknown) => { value: unknown };
      readonly jsonSchema: { readonly input: () => Record<string, unknown>; readonly output: () => Record<string, unknown> };
    };
  };
}

export function toolInput<S extends z.ZodType>(schema: S): ToolInput<S> {
  let json: Record<string, unknown> | undefined;
  const jsonSchema = () => (json ??= schema["~standard"].jsonSchema.input({ target: "draft-2020-12" }) as Record<string, unknown>);
  return {
    schema,
    advertised: {
      "~standard": { version: 1, vendor: "storyloom", validate: (value) => ({ value }), jsonSchema: { input: jsonSchema, output: jsonSchema } },
    },
  };
}

/** The arguments parsed with the tool's zod schema; a failure is the REST `VALIDATION_ERROR` naming each field. */
export function parseArguments<S extends z.ZodType>(input: ToolInput<S>, args: unknown): z.output<S> {
  const parsed = input.schema.safeParse(args ?? {});
  if (!parsed.success) throw validationError(fieldIssues(parsed.error));
  return parsed.data;
}

/**
 * The same object schema with descriptions on the named fields (for the model; `.describe()` reaches the JSON
 * Schema). `safeExtend` keeps the schema's refinements, so what is parsed is exactly what REST parses.
 */
export function describeFields<S extends z.ZodObject>(schema: S, descriptions: { [K in keyof S["shape"]]?: string }): S {
  const shape = schema.shape as Record<string, z.ZodType>;
  const described = Object.fromEntries(Object.entries(descriptions).map(([field, text]) => [field, shape[field].describe(text as string)]));
  return schema.safeExtend(described) as unknown as S;
}

/**
 * The optional `idempotency_key` argument of every creating tool: the REST Idempotency-Key as an argument (hosts
 * retry a call whose answer was lost; the same key answers the first call's result and writes nothing).
 */
const idempotencyKeyArgument = z
  .string()
  .regex(IDEMPOTENCY_KEY)
  .optional()
  .describe(
    "Optional: a unique string (1–255 visible ASCII characters) for this write; calling again with the same key and arguments within 24 h answers the first result and writes nothing",
  );

/** A creating tool's arguments: its schema with the optional `idempotency_key` (taken off by the door before `run`). */
export const creatingToolInput = <S extends z.ZodObject>(schema: S): ToolInput<S> =>
  toolInput(schema.safeExtend({ idempotency_key: idempotencyKeyArgument })) as unknown as ToolInput<S>;
