import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { SandboxError } from './errors.js';

export interface ExecOptions {
  /** Variables added to (or, when undefined, removed from) the inherited environment. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting kills the command's whole process group. */
  signal?: AbortSignal;
  /** Repo-relative working directory; the repository root by default. */
  cwd?: string;
}

export interface ExecResult {
  /** Exit code, or null when the command was killed by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** True when the command was stopped through the abort signal or kill(). */
  cancelled: boolean;
}

export interface ExecProcess {
  readonly pid: number;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the command has exited and its output streams are closed. */
  readonly done: Promise<ExecResult>;
  /** Kills the command's process group. */
  kill(): void;
}

export function mergeEnv(extra: ExecOptions['env']): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Wraps a child started as a process-group leader: cancellation kills everything it started. */
export function watchProcess(child: ChildProcess, signal: AbortSignal | undefined, onSettled: () => void): ExecProcess {
  const pid = child.pid;
  if (pid === undefined || !child.stdout || !child.stderr) {
    // spawn reports the failure as an 'error' event, which would crash the process unheard.
    child.once('error', () => undefined);
    onSettled();
    throw new SandboxError('internal', 'The command could not be started (no process id). Check that /bin/sh exists.');
  }
  let cancelled = false;
  const kill = (): void => {
    cancelled = true;
    killGroup(pid);
  };
  const onAbort = (): void => kill();
  if (signal?.aborted) kill();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const done = new Promise<ExecResult>((resolve, reject) => {
    child.once('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      onSettled();
      reject(new SandboxError('internal', `The command could not be started: ${err.message}`, { cause: err }));
    });
    child.once('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      onSettled();
      resolve({ exitCode: code, signal: sig, cancelled });
    });
  });
  return { pid, stdout: child.stdout, stderr: child.stderr, done, kill };
}

/** Runs to completion and collects the output; for short commands (tests, git helpers). */
export async function collect(p: ExecProcess): Promise<ExecResult & { stdout: string; stderr: string }> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  p.stdout.on('data', (b: Buffer) => out.push(b));
  p.stderr.on('data', (b: Buffer) => err.push(b));
  const result = await p.done;
  return { ...result, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
