import type { AsyncTool, JsonSchema, ToolContext, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { errorText, ToolError } from './errors.js';

/** What every file tool gets: the calling thread's sandbox and the shared options. */
export interface ToolEnv {
  sandboxFor: (threadId: string) => Promise<Sandbox>;
  repoRoot: string | undefined;
}

export interface SandboxToolSpec {
  name: string;
  description: string;
  input_schema: JsonSchema;
  display(input: Record<string, unknown>): string;
  run(input: Record<string, unknown>, sb: Sandbox, ctx: ToolContext): Promise<ToolOutput>;
}

/**
 * A file tool as an asynchronous runtime tool: dispatch only starts the work, which answers
 * through `respond`. Async rather than inline, because after a crash an interrupted edit must be
 * reported as "may have partly run", not silently run a second time, and because creating a
 * thread's sandbox on first use may take a while.
 */
export function sandboxTool(env: ToolEnv, spec: SandboxToolSpec): AsyncTool {
  return {
    kind: 'async',
    name: spec.name,
    description: spec.description,
    input_schema: spec.input_schema,
    display: (input) => spec.display(input),
    dispatch(input, ctx) {
      const work = async (): Promise<ToolOutput> => {
        try {
          return await spec.run(input, await env.sandboxFor(ctx.threadId), ctx);
        } catch (err) {
          return { content: errorText(err), isError: true };
        }
      };
      void work().then((output) =>
        ctx.respond(output).catch((err: unknown) => {
          // The system closed meanwhile; the call is reported as interrupted on the next start.
          process.emitWarning(`${spec.name}: could not deliver the result: ${(err as Error).message}`);
        }),
      );
    },
  };
}

/** A required string argument (the schema already checked it; this narrows the type). */
export function str(input: Record<string, unknown>, key: string): string {
  const v = input[key];
  if (typeof v !== 'string') throw new ToolError(`"${key}" must be a string.`);
  return v;
}

export function optStr(input: Record<string, unknown>, key: string): string | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ToolError(`"${key}" must be a string when given.`);
  return v;
}

export function optInt(input: Record<string, unknown>, key: string): number | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new ToolError(`"${key}" must be a whole number when given.`);
  return v;
}

/** For display lines: one line, not too long. */
export function short(value: unknown, max = 80): string {
  const line = String(value ?? '').split('\n')[0]!;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Quotes one argument for /bin/sh. */
export function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
