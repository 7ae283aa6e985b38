import { spawn } from 'node:child_process';
import { childStdio } from './inherited-fds.js';

export interface RunOptions {
  cwd?: string | undefined;
  /** The whole environment of the child (nothing is inherited). */
  env?: Readonly<Record<string, string>>;
  input?: string | Uint8Array | undefined;
  /** Output (stdout and stderr together) beyond this fails the run: git's output is read into memory. */
  maxBuffer?: number;
}

export interface RunResult {
  stdout: Buffer;
  stderr: Buffer;
  /** undefined when the process could not be started or was killed by a signal. */
  exitCode: number | undefined;
  signal: NodeJS.Signals | null;
  /** Why the process could not be started, or why its output was cut (maxBuffer). */
  error?: Error;
}

// What execa allowed by default, which apply-policy.ts sizes diffs against.
const DEFAULT_MAX_BUFFER = 100 * 1024 * 1024;

/**
 * Runs a program to completion, output collected as bytes. A bare child_process.spawn: the
 * plumbing runs tens of short processes per tool call and session, and a general wrapper (execa)
 * cost several milliseconds of this process's CPU each, on the path of every diff and apply.
 * Never rejects: failures are in the result.
 */
export function runProcess(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const max = opts.maxBuffer ?? DEFAULT_MAX_BUFFER;
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let error: Error | undefined;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, args, {
        cwd: opts.cwd,
        env: opts.env ?? {},
        stdio: childStdio([opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']),
      });
    } catch (e) {
      resolve({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: undefined, signal: null, error: e as Error });
      return;
    }
    const collect = (into: Buffer[]) => (b: Buffer) => {
      size += b.length;
      if (size > max) {
        error ??= new Error(`output exceeded ${max} bytes`);
        child.kill('SIGKILL');
        return;
      }
      into.push(b);
    };
    child.stdout!.on('data', collect(out));
    child.stderr!.on('data', collect(err));
    child.once('error', (e) => {
      error ??= e;
    });
    if (opts.input !== undefined) {
      // The program may exit without reading all of it (EPIPE): its exit status tells what happened.
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(opts.input);
    }
    child.once('close', (code, signal) => {
      resolve({
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        // A negative code is a failed spawn (the errno), reported as `error`.
        exitCode: code === null || code < 0 ? undefined : code,
        signal,
        ...(error ? { error } : {}),
      });
    });
  });
}
