import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { SandboxError } from './errors.js';
import { commandBaseEnv } from './secret-env.js';

export interface ExecOptions {
  /**
   * Variables added to (or, when undefined, removed from) the inherited environment. The
   * inherited environment never carries ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; set them here
   * explicitly if a command really needs them.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting kills the command's whole process group. */
  signal?: AbortSignal;
  /** Repo-relative working directory; the repository root by default. */
  cwd?: string;
  /**
   * Gives this one command the machine's network even when the session's containment keeps it
   * off (a re-run the user approved).
   */
  network?: boolean;
  /**
   * Gives the command a pipe as its standard input (ExecProcess.stdin); otherwise it reads
   * /dev/null. For long-lived helpers spoken to over stdio (MCP servers).
   */
  stdin?: boolean;
  /**
   * The shell to run the command in (its path, e.g. /bin/bash), instead of /bin/sh: the
   * sandbox's /bin/sh execs it at once with the command.
   */
  shell?: string;
}

export interface ExecResult {
  /** Exit code, or null when the command was killed by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** True when the command was stopped through the abort signal or kill(). */
  cancelled: boolean;
  /**
   * Set when the sandbox's storage was over its disk limit during the command (it was stopped, or
   * could grow no file, or it took the storage over): what happened and what to do (disk-watch.ts).
   */
  diskLimit?: string;
}

export interface ExecProcess {
  readonly pid: number;
  /** The command's standard input, when started with `stdin: true`. */
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the command has exited and its output streams are closed. */
  readonly done: Promise<ExecResult>;
  /** Kills the command's process group. */
  kill(): void;
  /**
   * The command (its process and pipes) no longer keeps this process's event loop alive: for a
   * long-lived helper that must not hold a finished run open. Its output still arrives.
   */
  unref(): void;
}

/** A command's environment: the allowlisted part of ours (commandBaseEnv) with `extra` on top. */
export function mergeEnv(extra: ExecOptions['env']): Record<string, string> {
  const env = commandBaseEnv();
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

/** The only child of `pid` (Linux), if it has exactly one. */
function onlyChild(pid: number): number | undefined {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return kids.length === 1 ? Number(kids[0]) : undefined;
  } catch {
    return undefined;
  }
}

/** State letter and start time of `pid`, or undefined once it is gone. */
function statOf(pid: number): { state: string; start: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], start: fields[19] };
  } catch {
    return undefined;
  }
}

/**
 * Resolves once the init `pid` (started at `start`) is a zombie or gone. The kernel turns a pid
 * namespace's init into a zombie only after every other process in the namespace has exited, so
 * then nothing of the command is left. There is no event for it (no pidfd in Node), so this
 * polls; it takes milliseconds, and gives up after `limitMs` (the kill is underway regardless).
 */
async function namespaceEmptied(pid: number, start: string, limitMs = 5000): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const st = statOf(pid);
    if (!st || st.start !== start || st.state === 'Z' || st.state === 'X' || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** How a backend's command is contained (see SpawnedCommand in backend.ts). */
export interface Containment {
  /**
   * The child forks the init of a pid namespace holding the whole command (`unshare --fork`):
   * when that init exits the kernel kills everything else in the namespace, and the child exits
   * only after that. Cancelling kills the child's process group, child included, so `done` then
   * waits for the init itself (see namespaceEmptied): it settles once nothing of the command is
   * left. (Killing the init alone would leave the child to report it: util-linux 2.38 unshare
   * prints "sigprocmask unblock failed" into the command's stderr for a child killed by SIGKILL.)
   */
  namespaceInit?: boolean;
  /**
   * How many forks down from the child the namespace's init is (default 1: its only child). A
   * command joining a holder's pid namespace first (nsenter forks into it) has it at 2.
   */
  initDepth?: number;
  /** Kills what the command left outside its process group; run at exit and at cancel. */
  reap?: () => Promise<void>;
}

/**
 * Wraps a child started as a process-group leader: cancellation kills everything it started.
 * `reap` runs as soon as the child exits or is cancelled, and `done` settles only after it
 * finished.
 */
export function watchProcess(
  child: ChildProcess,
  signal: AbortSignal | undefined,
  onSettled: () => void,
  { namespaceInit, initDepth = 1, reap }: Containment = {},
): ExecProcess {
  const pid = child.pid;
  if (pid === undefined || !child.stdout || !child.stderr) {
    // spawn reports the failure as an 'error' event, which would crash the process unheard.
    child.once('error', () => undefined);
    onSettled();
    throw new SandboxError('internal', 'The command could not be started (no process id). Check that /bin/sh exists.');
  }
  let cancelled = false;
  // Latest sweep: one at exit lets 'close' come (a daemon holding the output pipe is gone); one
  // at cancel catches what the group kill missed. 'close' waits for the last one started.
  let reaping: Promise<void> = Promise.resolve();
  const sweep = (): void => {
    if (reap) reaping = reaping.then(reap, reap).catch(() => undefined);
  };
  const kill = (): void => {
    cancelled = true;
    // Before the fork (no init yet) nothing else of the command exists: the group is all of it.
    let init: number | undefined = namespaceInit && child.exitCode === null && child.signalCode === null ? pid : undefined;
    for (let depth = 0; depth < initDepth && init !== undefined; depth++) init = onlyChild(init);
    const initStat = init === undefined ? undefined : statOf(init);
    killGroup(pid);
    if (init !== undefined && initStat) reaping = reaping.then(() => namespaceEmptied(init, initStat.start));
    sweep();
  };
  child.once('exit', sweep);
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
      void reaping.then(() => {
        onSettled();
        resolve({ exitCode: code, signal: sig, cancelled });
      });
    });
  });
  const unref = (): void => {
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
  };
  return { pid, stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, done, kill, unref };
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
