import type { AsyncTool, InputOf, ToolContext, ToolOutput, ToolSchema } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { ORDER_NOTE, type CallOrder } from './call-order.js';
import { errorText, ToolError } from './errors.js';
import type { NestedInstructions } from './nested-instructions.js';
import { readMemoryOf } from './read-memory.js';

/** What every file tool gets: the calling thread's sandbox and the shared options. */
export interface ToolEnv {
  sandboxFor: (threadId: string) => Promise<Sandbox>;
  repoRoot: string | undefined;
  /** Shared by all the tools of one set (execute_command too), so a thread's calls follow one order. */
  order: CallOrder;
  /**
   * Shows a thread the instruction files of the directories its calls reach, once each (see
   * NestedInstructions); absent, results are the tools' own.
   */
  instructions?: NestedInstructions;
  /** Directories outside the repository its read tools may read by absolute path (see added-dirs.ts). */
  readDirs?: readonly string[];
}

/** The answer to a call cancelled while it waited for its turn: it never ran. */
export const CANCELLED_BEFORE_START = 'Error: the call was cancelled before it started; it changed nothing.';

/** A file tool, its input typed by its schema (see the runtime's defineTool). */
export interface SandboxToolSpec<S extends ToolSchema> {
  name: string;
  description: string;
  /** Whether the tool only reads the thread's files or changes them: it decides the order (call-order.ts). */
  access: 'read' | 'write';
  input_schema: S;
  display(input: InputOf<S>): string;
  run(input: InputOf<S>, sb: Sandbox, ctx: ToolContext): Promise<ToolOutput>;
}

/**
 * A file tool as an asynchronous runtime tool: dispatch only starts the work, which answers
 * through `respond`. Async rather than inline, because after a crash an interrupted edit must be
 * reported as "may have partly run", not silently run a second time, and because creating a
 * thread's sandbox on first use may take a while. Since the calls of one reply are all dispatched
 * at once, the work waits for its turn in the thread's call order first.
 */
export function sandboxTool<const S extends ToolSchema>(env: ToolEnv, spec: SandboxToolSpec<S>): AsyncTool {
  // The handlers as the runtime calls them: the registry checked the input against the schema
  // before dispatch (as defineTool assumes; TypeScript can't follow a schema left generic here).
  const handlers = spec as unknown as {
    display(input: Record<string, unknown>): string;
    run(input: Record<string, unknown>, sb: Sandbox, ctx: ToolContext): Promise<ToolOutput>;
  };
  return {
    kind: 'async',
    name: spec.name,
    description: `${spec.description} ${ORDER_NOTE[spec.access]}`,
    input_schema: spec.input_schema,
    display: (input) => handlers.display(input),
    dispatch(input, ctx) {
      // Every file-tool call notes the thread's context size: a drop means its history was
      // compacted, and read_file must not point at earlier results any more (read-memory.ts).
      readMemoryOf(env).observe(ctx.thread);
      // Taken before dispatch returns: the place in line is the order of the calls in the reply.
      const turn = env.order.enter(ctx.threadId, ctx.call.id, spec.access);
      const work = async (): Promise<ToolOutput> => {
        try {
          if (!(await turn.ready)) return { content: CANCELLED_BEFORE_START, isError: true };
          const sb = await env.sandboxFor(ctx.threadId);
          const output = await handlers.run(input, sb, ctx);
          // Still in the call's turn: the instructions are read as the call left the sandbox.
          return env.instructions ? await env.instructions.addTo(output, input, sb, ctx.thread) : output;
        } catch (err) {
          return { content: errorText(err), isError: true };
        } finally {
          turn.leave();
        }
      };
      void work().then((output) =>
        ctx.respond(output).catch((err: unknown) => {
          // The system closed meanwhile; the call is reported as interrupted on the next start.
          process.emitWarning(`${spec.name}: could not deliver the result: ${(err as Error).message}`);
        }),
      );
    },
    cancel(ctx) {
      // Only a call still waiting can be stopped: a file operation under way runs to its end.
      env.order.withdraw(ctx.threadId, ctx.call.id);
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

export function optBool(input: Record<string, unknown>, key: string): boolean | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ToolError(`"${key}" must be true or false when given.`);
  return v;
}

/**
 * A model's argument as text for a display line: a string as it is, anything else (a model may
 * send an object where a string belongs) as JSON rather than "[object Object]".
 */
export function shown(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** For display lines: one line, not too long. */
export function short(value: unknown, max = 80): string {
  const line = shown(value).split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

