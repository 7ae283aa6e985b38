import { chmod, cp, lstat, readdir, rm } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import { runProcess } from './run-process.js';
import { inheritedEnv } from './secret-env.js';

/**
 * Deletes a tree even when it holds directories without write or search permission: the kernel
 * creates overlay `work/work` with mode 000, and tools such as Go's module cache write 0555 dirs.
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    await removeAll(dir);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'ENOTEMPTY') throw err;
  }
  await makeOwnerWritable(dir);
  await removeAll(dir);
}

/**
 * Node names each entry by its whole path, which the kernel refuses past PATH_MAX: a tree deeper
 * than that (a command can make one, `mkdir -p` goes a step at a time) is removed by rm(1), which
 * walks it from descriptor to descriptor.
 */
async function removeAll(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw err;
  }
  const r = await runProcess('rm', ['-rf', '--', dir], { env: inheritedEnv() });
  if (r.exitCode !== 0) throw new Error(`rm -rf ${dir} failed: ${r.error?.message ?? r.stderr.toString().trim()}`);
}

async function makeOwnerWritable(dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (!st?.isDirectory()) return;
  await chmod(dir, (st.mode & 0o7777) | 0o700).catch(() => undefined);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => makeOwnerWritable(path.join(dir, e.name))));
}

/**
 * Copies a directory's contents preserving modes, times, symlinks and special files; on Linux
 * `cp` clones extents on btrfs/XFS (reflink) and is much faster than a JS walk on large trees.
 */
export async function copyTree(src: string, dst: string): Promise<void> {
  if (process.platform === 'linux') {
    const r = await runProcess('cp', ['-a', '--reflink=auto', `${src}/.`, dst], { env: inheritedEnv() });
    if (r.exitCode !== 0) throw new Error(`cp -a ${src} ${dst} failed: ${r.error?.message ?? r.stderr.toString().trim()}`);
    return;
  }
  await cp(src, dst, {
    recursive: true,
    preserveTimestamps: true,
    verbatimSymlinks: true,
    mode: constants.COPYFILE_FICLONE,
  });
}

export async function pathExists(p: string): Promise<boolean> {
  return (await lstat(p).catch(() => undefined)) !== undefined;
}
