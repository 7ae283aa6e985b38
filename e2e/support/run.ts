// Running the built CLI with more control than support/cli.ts gives: its pid, stdin from a file,
// a wrapper command (GNU time). Same clean environment and own HOME.
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { BIN, tempDir, type CliRun } from './cli.js';

export interface Running {
  pid: number;
  done: Promise<CliRun>;
  kill(signal: NodeJS.Signals): void;
}

export interface RunOptions {
  cwd: string;
  env?: Record<string, string>;
  /** A file to connect to stdin (otherwise /dev/null). */
  stdinFile?: string;
  /** argv run in front of `node main.js` (e.g. GNU time). */
  wrapper?: string[];
}

export function start(args: string[], o: RunOptions): Running {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: tempDir(), NO_COLOR: '1', ...o.env };
  const stdinFd = o.stdinFile === undefined ? 'ignore' : openSync(o.stdinFile, 'r');
  const argv = [...(o.wrapper ?? []), process.execPath, BIN, ...args];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: o.cwd, env, stdio: [stdinFd, 'pipe', 'pipe'] });
  if (typeof stdinFd === 'number') closeSync(stdinFd);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliRun>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { pid: child.pid!, done, kill: (s) => child.kill(s) };
}

export function run(args: string[], o: RunOptions): Promise<CliRun> {
  return start(args, o).done;
}

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
