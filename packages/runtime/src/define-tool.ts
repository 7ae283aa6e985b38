// Tools written from their input schema: the handler's input type is the schema's own
// (json-schema-to-ts reads it from the literal), so a property added to the schema is one the
// handler can read, and one it reads must be in the schema. The registry checks every call
// against the schema before the tool sees it (tool-registry.ts), so the input is what the type
// says.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { AsyncTool, AsyncToolContext, JsonSchema, SyncTool, ToolContext, ToolOutput } from './tool.js';

/** An object schema, as a literal: what a tool's input schema is. */
export type ToolSchema = JsonSchema;

/** The input a call of a tool with this schema has, once the registry has checked it. */
export type InputOf<S extends ToolSchema> = S extends JSONSchema ? FromSchema<S> : Record<string, unknown>;

type Typed<T, S extends ToolSchema> = Omit<T, 'input_schema' | 'display' | 'execute' | 'dispatch'> & {
  input_schema: S;
  display?(input: InputOf<S>): string;
};

export type TypedSyncTool<S extends ToolSchema> = Typed<SyncTool, S> & {
  kind: 'sync';
  execute(input: InputOf<S>, ctx: ToolContext): Promise<ToolOutput> | ToolOutput;
};

export type TypedAsyncTool<S extends ToolSchema> = Typed<AsyncTool, S> & {
  kind: 'async';
  dispatch(input: InputOf<S>, ctx: AsyncToolContext): void | Promise<void>;
};

/** A tool whose handlers take the input its schema describes. */
export function defineTool<const S extends ToolSchema>(tool: TypedSyncTool<S>): SyncTool;
export function defineTool<const S extends ToolSchema>(tool: TypedAsyncTool<S>): AsyncTool;
export function defineTool<const S extends ToolSchema>(tool: TypedSyncTool<S> | TypedAsyncTool<S>): SyncTool | AsyncTool {
  // The registry hands a handler only input its schema accepts (see the top of this file).
  return tool;
}
