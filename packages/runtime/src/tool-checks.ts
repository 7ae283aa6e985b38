// Input checks made ahead of time: Ajv's standalone code for tools' schemas, made when the CLI
// is built, so that a session checks its first tool call without loading Ajv and compiling a
// schema (CPU a quick first reply otherwise waits for). Each check is keyed by its tool's name
// and a hash of the schema it was made from: a tool whose schema changed since is compiled on
// first use as before, so a stale check costs time, never a wrong answer.
import { createHash } from 'node:crypto';
import type { JsonSchema, ToolDefinition } from './tool.js';
import type { InputCheck } from './tool-registry.js';

/**
 * How the schemas of the tools a system is made with are compiled (Ajv options). Checks made
 * ahead of time must be made with these too: same checks, same messages.
 */
export const OWN_TOOL_CHECKS = { allErrors: true, strict: false, validateSchema: false } as const;

/** A check made ahead of time, and the schema (by hash) it checks. */
export interface CheckMadeAhead {
  schemaHash: string;
  check: InputCheck;
}

/** Checks made ahead of time, by tool name (SystemOptions.validators). */
export type ToolChecks = ReadonlyMap<string, CheckMadeAhead>;

/** What a check made ahead of time is keyed by besides its tool's name. */
export function schemaHash(schema: JsonSchema): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex').slice(0, 32);
}

/**
 * The source of an ES module exporting TOOL_CHECKS (a ToolChecks) for these tools: their checks
 * as Ajv's standalone code, made with the options the registry compiles with (same verdicts, same
 * messages). Ajv is loaded here only: a program that runs the module never loads it.
 */
export async function toolChecksModule(tools: readonly ToolDefinition[]): Promise<string> {
  const [{ Ajv }, standalone] = await Promise.all([import('ajv'), import('ajv/dist/standalone/index.js')]);
  const ajv = new Ajv({ ...OWN_TOOL_CHECKS, code: { source: true, esm: true } });
  const names: Record<string, string> = {};
  tools.forEach((tool, i) => {
    ajv.addSchema(tool.input_schema, `tool${i}`);
    names[`check${i}`] = `tool${i}`;
  });
  const entries = tools.map((tool, i) => `  [${JSON.stringify(tool.name)}, { schemaHash: ${JSON.stringify(schemaHash(tool.input_schema))}, check: check${i} }],`);
  return [
    '// Made by toolChecksModule (@infinity-code/runtime, tool-checks.ts): do not edit.',
    // The CommonJS module is the function itself, with its types on `default`.
    standalone.default.default(ajv, names),
    '',
    'export const TOOL_CHECKS = new Map([',
    ...entries,
    ']);',
    '',
  ].join('\n');
}
