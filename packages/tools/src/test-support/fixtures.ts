// Real repositories and sandbox sessions for the tools' tests. Not part of the package's build.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openSession, probeBackends, type BackendName, type SandboxBackend, type ExecProcess, type Sandbox, type SandboxSession } from '@infinity-code/sandbox';

const run = promisify(execFile);

export const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test User',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test User',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** Temp dirs and sessions made by a test file, removed by its afterAll. */
export class Fixtures {
  private readonly dirs: string[] = [];
  private readonly sessions: SandboxSession[] = [];

  async tempDir(prefix = 'ic-tools-'): Promise<string> {
    // The real path: it is what git and the sandbox report.
    const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
    this.dirs.push(dir);
    return dir;
  }

  /** A git repository with `files` committed on main. */
  async repo(files: Record<string, FileSpec>): Promise<string> {
    const root = await this.tempDir('ic-tools-repo-');
    await git(root, 'init', '-q', '-b', 'main');
    await writeFiles(root, files);
    await git(root, 'add', '-A');
    await git(root, 'commit', '-q', '--allow-empty', '-m', 'initial');
    return root;
  }

  /** A sandbox session on `repo`, with the given backend or the one the probe picks. */
  async session(repo: string, backend?: BackendName | SandboxBackend): Promise<SandboxSession> {
    const session = await openSession({ repo, stateDir: await this.tempDir('ic-tools-state-'), ...(backend ? { backend } : {}) });
    this.sessions.push(session);
    return session;
  }

  async cleanup(): Promise<void> {
    while (this.sessions.length > 0) await this.sessions.pop()!.close();
    while (this.dirs.length > 0) await rm(this.dirs.pop()!, { recursive: true, force: true });
  }
}

export type FileSpec = string | Buffer | { symlink: string } | { content: string; mode: number };

export async function writeFiles(root: string, files: Record<string, FileSpec>): Promise<void> {
  for (const [rel, spec] of Object.entries(files)) {
    const p = path.join(root, rel);
    await mkdir(path.dirname(p), { recursive: true });
    if (typeof spec === 'string' || Buffer.isBuffer(spec)) await writeFile(p, spec);
    else if ('symlink' in spec) await symlink(spec.symlink, p);
    else {
      await writeFile(p, spec.content);
      await chmod(p, spec.mode);
    }
  }
}

export async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await run('git', args, { cwd, env: GIT_ENV })).stdout;
}

/**
 * The backends the suites run on: the one the probe picks here, and the portable copy backend
 * (every backend must behave the same; copy is cheap enough for small repositories).
 */
export async function backendsUnderTest(): Promise<BackendName[]> {
  const state = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ic-tools-probe-')));
  try {
    const { chosen } = await probeBackends(state);
    return chosen === 'copy' ? ['copy'] : [chosen, 'copy'];
  } finally {
    await rm(state, { recursive: true, force: true });
  }
}

/** A tiny valid PNG (1x1, transparent). */
export const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * No live process is left in process group `pgid`. Ideally the group is gone (kill(-pgid, 0)
 * fails with ESRCH); but members killed together with their parent are orphans, and this
 * container's PID 1 (process_api) never reaps orphans, so they stay as zombies (<defunct>: no
 * code running, no memory, only a pid entry) until it exits. A normal init reaps them at once.
 */
export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw err;
  }
  return groupMembers(pgid).every((m) => m.state === 'Z');
}

/**
 * Resolves once `groupGone(pgid)`, or after `timeoutMs` (the caller then asserts and shows the
 * members). Polling is the only way: nothing notifies us when processes that are not our own
 * children exit, and the kernel finishes tearing down a killed pid namespace asynchronously,
 * after the command's leader (our child) has already been reaped.
 */
export async function groupEnded(pgid: number, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!groupGone(pgid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** Processes of group `pgid` with their state letter, from /proc. */
export function groupMembers(pgid: number): Array<{ pid: number; state: string; command: string }> {
  const out: Array<{ pid: number; state: string; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may contain spaces, so split after the last ')'.
    const close = stat.lastIndexOf(')');
    const [state, , pgrp] = stat.slice(close + 2).split(' ');
    if (Number(pgrp) === pgid) out.push({ pid: Number(entry), state: state, command: stat.slice(stat.indexOf('(') + 1, close) });
  }
  return out;
}

/**
 * The sandbox, with every process its exec() starts reported to `onExec`: how a test learns the
 * real process group of a command (a view of the real object, not a stand-in).
 */
export function watchExec(sb: Sandbox, onExec: (proc: ExecProcess) => void): Sandbox {
  return new Proxy(sb, {
    get(target, prop) {
      if (prop !== 'exec') {
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      return async (...args: Parameters<Sandbox['exec']>) => {
        const proc = await target.exec(...args);
        onExec(proc);
        return proc;
      };
    },
  });
}
