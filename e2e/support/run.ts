// Helpers of the fault suite over support/cli.ts: stream-json parsing, the stack-trace pattern.
import { runCli, startCli, type StartOptions, type Started } from './cli.js';

// The same runner as support/cli.ts, under the names the fault suite uses.
export type Running = Started;
export type RunOptions = StartOptions;
export const start = startCli;
export const run = runCli;

/** Parses stream-json output (one JSON object per line). */
export function events(stdout: string): Array<{ type: string; [k: string]: unknown }> {
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
}

/** A stack trace in user-facing output (what must never reach the user). */
export const STACK_TRACE = /\n\s+at \S+ \(|\n\s+at (file:|node:|\/)/;
