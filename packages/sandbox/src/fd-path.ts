import { constants } from 'node:fs';
import { lstat, mkdir, open, readlink, type FileHandle } from 'node:fs/promises';

/**
 * Directory handles that pin where a path walk is, so that no later step can be redirected. The
 * kernel resolves `/proc/self/fd/<n>/<name>` from the directory `n` refers to, whatever has been
 * renamed or swapped for a symlink since: one component at a time, with O_NOFOLLOW on each, this
 * is openat() without a native binding. It matters because the host path of a sandbox view (the
 * holder's root link in procfs) is not a chroot: an absolute symlink met while following it is
 * resolved against this process's root, the whole machine, with this process's rights.
 */
export const O_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A name inside the directory `dir`, as a path the kernel resolves relative to it. */
export function under(dir: FileHandle, name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) {
    throw new Error(`internal: "${name}" is not a single path component`);
  }
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** The directory itself, as a path (for readdir and the like). */
export function self(dir: FileHandle): string {
  return `/proc/self/fd/${dir.fd}`;
}

/** Opens `name` in `dir` as a directory, never through a symlink (ELOOP/ENOTDIR otherwise). */
export function openDir(dir: FileHandle, name: string): Promise<FileHandle> {
  return open(under(dir, name), O_DIR);
}

/** What `name` in `dir` is, without following it; undefined when it does not exist. */
export async function lstatIn(dir: FileHandle, name: string) {
  return lstat(under(dir, name)).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
    throw err;
  });
}

export function readlinkIn(dir: FileHandle, name: string): Promise<string> {
  return readlink(under(dir, name));
}

/** Opens `name` in `dir` as a directory, making it first when missing. */
export async function openOrMakeDir(dir: FileHandle, name: string, owner?: number): Promise<FileHandle> {
  try {
    return await openDir(dir, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const made = await mkdir(under(dir, name)).then(
      () => true,
      (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
        return false;
      },
    );
    const opened = await openDir(dir, name);
    if (made && owner !== undefined) await opened.chown(owner, owner);
    return opened;
  }
}
