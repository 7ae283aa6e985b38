import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, realpath, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Sandbox } from '../index.js';
import { removeTree } from '../fs-util.js';
import { mountsUnder, processesUsing } from '../proc.js';

const cleanups: string[] = [];

/**
 * A fresh temp dir, removed by cleanupTempDirs(). Real path, so it matches what git reports.
 * `base` outside /tmp (e.g. /var/tmp) makes it visible to commands, whose /tmp is their own.
 */
export async function tempDir(prefix = 'ic-sbx-', base = os.tmpdir()): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(base, prefix)));
  cleanups.push(dir);
  // Visible to commands means readable by them too, as a host directory like /etc is: mkdtemp
  // makes it its owner's alone, and under a root-run CLI commands are not its owner
  // (command-user.ts).
  if (base !== os.tmpdir()) await chmod(dir, 0o755);
  return dir;
}

export async function cleanupTempDirs(): Promise<void> {
  while (cleanups.length > 0) await removeTree(cleanups.pop()!);
}

export const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Test User',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test User',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await execa('git', args, { cwd, env: GIT_ENV });
  return r.stdout;
}

export type FileSpec = string | Buffer | { content: string | Buffer; mode?: number } | { symlink: string };

export async function writeFiles(root: string, files: Record<string, FileSpec>): Promise<void> {
  for (const [rel, spec] of Object.entries(files)) {
    const p = path.join(root, rel);
    await mkdir(path.dirname(p), { recursive: true });
    if (typeof spec === 'object' && 'symlink' in spec) {
      await symlink(spec.symlink, p);
    } else if (typeof spec === 'string' || Buffer.isBuffer(spec)) {
      await writeFile(p, spec);
    } else {
      await writeFile(p, spec.content);
      if (spec.mode !== undefined) await chmod(p, spec.mode);
    }
  }
}

/** A real git repository in a temp dir (named from `prefix`, in `base` or the system's) with `files` committed on branch main. */
export async function makeRepo(files: Record<string, FileSpec>, prefix = 'ic-repo-', base?: string): Promise<string> {
  const root = await tempDir(prefix, base);
  await git(root, 'init', '-q', '-b', 'main');
  await writeFiles(root, files);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'initial');
  return root;
}

export function lines(n: number, label = 'line'): string {
  return Array.from({ length: n }, (_, i) => `${label} ${i + 1}`).join('\n') + '\n';
}

/** Deterministic bytes with NULs, so git treats the file as binary. */
export function binary(seed: number, size = 2048): Buffer {
  const b = Buffer.alloc(size);
  let x = seed * 2654435761;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = i % 7 === 0 ? 0 : x & 0xff;
  }
  return b;
}

/** sha256 + mode of every file and symlink under `dir` (including .git), keyed by relative path. */
export async function hashTree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      const st = await lstat(p);
      if (st.isDirectory()) {
        out.set(`${r}/`, (st.mode & 0o777).toString(8));
        await walk(p, r);
      } else if (st.isSymbolicLink()) {
        out.set(r, `link:${await readlink(p)}`);
      } else {
        const h = createHash('sha256').update(await readFile(p)).digest('hex');
        out.set(r, `${(st.mode & 0o777).toString(8)}:${h}`);
      }
    }
  };
  await walk(dir, '');
  return out;
}

/** The merged view of a sandbox as path -> mode+content hash (without .git and node_modules). */
export async function viewTree(sb: Sandbox): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await sb.list('', { recursive: true })) {
    if (e.path === '.git' || e.path.split('/').includes('node_modules')) continue;
    if (e.type === 'dir') continue;
    const st = await sb.stat(e.path);
    if (e.type === 'symlink') {
      out.set(e.path, `symlink:${(await sb.readFile(e.path)).toString('hex')}`);
      continue;
    }
    const h = createHash('sha256').update(await sb.readFile(e.path)).digest('hex');
    out.set(e.path, `${st.mode & 0o111 ? 'x' : '-'}:${h}`);
  }
  return out;
}

/** Processes using `stateDir`, and mounts under it or `repo` in any process's mount table. */
export async function leftovers(stateDir: string, repo: string): Promise<{ processes: number[]; mounts: string[] }> {
  const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
  const mounts = await Promise.all(
    pids.flatMap((p) => [mountsUnder(stateDir, `/proc/${p}/mountinfo`), mountsUnder(repo, `/proc/${p}/mountinfo`)]),
  );
  return { processes: await processesUsing(stateDir), mounts: mounts.flat() };
}

/** Host pids (from this process's /proc) with `arg` as one of their command-line arguments. */
export async function pidsWithArg(arg: string): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
  const found = await Promise.all(
    pids.map(async (p) => ((await readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')).split('\0').includes(arg) ? [Number(p)] : [])),
  );
  return found.flat();
}

/** Host pids whose environment (as /proc shows it, i.e. at exec) contains `text`. */
export async function pidsWithEnvContaining(text: string): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid);
  const found = await Promise.all(
    pids.map(async (p) => ((await readFile(`/proc/${p}/environ`).catch(() => Buffer.alloc(0))).includes(text) ? [Number(p)] : [])),
  );
  return found.flat();
}

/**
 * Shell code that starts a process with `tag` as its $0 (via `launcher`, e.g. `setsid`, which
 * takes it out of the command's process group and session), output detached, and continues only
 * once that process runs: it blocks forever on a FIFO nobody opens. No timing involved.
 */
export function startTaggedDaemon(tag: string, launcher = ''): string {
  return (
    `mkfifo ${tag}.ready ${tag}.never && ` +
    `{ ${launcher} sh -c 'echo up > "$0.ready"; read x < "$0.never"' ${tag} </dev/null >/dev/null 2>&1 & } && ` +
    `read up < ${tag}.ready && echo "daemon $up"`
  );
}
