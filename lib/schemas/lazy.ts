import type * as z from "zod";

/**
 * Schemas are built on first use, never at import. Building a zod schema is most of what a
 * function's cold start would otherwise spend on the project's own code (every constructor,
 * `.meta()`, `.optional()`... allocates, and the garbage has to be collected), and a function
 * needs only the request schemas of the routes it is called on (response schemas are read only
 * by the OpenAPI document and the tests). So every schema of `lib/schemas/` is a `lazy` value:
 * call it to get the schema, built once, the same instance every time (a schema with a
 * `.meta({id})` is one instance, as the OpenAPI components require). A route holds its schemas
 * uncalled (lib/routes/define.ts): they are built when the route is first matched, or when the
 * OpenAPI document is built.
 *
 * `@__NO_SIDE_EFFECTS__`: a bundle that never calls a lazy value leaves it out.
 */
export type Lazy<T> = () => T;

/* @__NO_SIDE_EFFECTS__ */
export function lazy<T>(build: () => T): Lazy<T> {
  let built: T | undefined;
  return () => (built ??= build());
}

/** The parsed type of a lazy schema (`z.infer` of what it builds). */
export type Infer<T extends Lazy<z.ZodType>> = z.infer<ReturnType<T>>;
