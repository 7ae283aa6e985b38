import { constants } from 'node:fs';
import { lchown, mkdir, open, readdir, rename, rmdir, symlink, unlink, type FileHandle } from 'node:fs/promises';
import { SandboxError, SandboxPathError } from './errors.js';
import { lstatIn, openDir, openOrMakeDir, readlinkIn, self, under } from './fd-path.js';
import { partialWritePath } from './partial-write.js';

export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

export interface DirEntry {
  /** Repo-relative path. */
  path: string;
  name: string;
  type: EntryType;
}

export interface FileStat {
  type: EntryType;
  size: number;
  /** Permission bits, e.g. 0o755. */
  mode: number;
  mtimeMs: number;
}

const MAX_SYMLINK_HOPS = 40;
const O_FILE = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function entryType(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryType {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'other';
}

/**
 * Where a path led: the directory holding its last component (open, pinned) and that component's
 * name ('' when the path is a directory reached as a whole, e.g. the root). `close` releases
 * every handle the walk opened.
 */
interface Walk {
  dir: FileHandle;
  name: string;
  rel: string;
  close(): Promise<void>;
}

function isErr(err: unknown, ...codes: string[]): boolean {
  return codes.includes((err as NodeJS.ErrnoException).code ?? '');
}

/**
 * File operations on a sandbox's merged view. Symlinks are resolved here, component by component,
 * as if the view were mounted at the repository path, and every step goes through a directory
 * handle (see fd-path.ts): a command that swaps a directory for a symlink while a write is on its
 * way can make the write fail, never land outside the sandbox. Writes into `.git` are refused: the
 * sandbox's git data belongs to the agent's git commands, and config there is read by git.
 */
export class ViewFs {
  constructor(
    private readonly hostRoot: () => Promise<string>,
    /** Absolute prefixes that mean "the repository root" inside the view. */
    private readonly repoPrefixes: readonly string[],
    /** Who gets what this creates (BackendSandbox.viewOwner); undefined: whoever creates it. */
    private readonly owner?: number,
  ) {}

  /** Repo-relative, symlink-free path; throws when it would leave the repository. */
  async resolve(p: string, opts: { followLast?: boolean } = {}): Promise<{ rel: string }> {
    const w = await this.walk(p, opts);
    await w.close();
    return { rel: w.rel };
  }

  private async walk(p: string, opts: { followLast?: boolean; create?: boolean } = {}): Promise<Walk> {
    const followLast = opts.followLast ?? true;
    const queue = this.segments(p, p);
    const root = await open(await this.hostRoot(), constants.O_RDONLY | constants.O_DIRECTORY);
    const stack: FileHandle[] = [root];
    const names: string[] = [];
    const close = async (): Promise<void> => {
      for (const h of stack.splice(0).reverse()) await h.close().catch(() => undefined);
    };
    let hops = 0;
    // The last link followed: a `..` past the root after one is that link leading out.
    let lastLink: string | undefined;
    const follow = async (dir: FileHandle, seg: string): Promise<void> => {
      if (++hops > MAX_SYMLINK_HOPS) throw new SandboxPathError(p, 'has too many levels of symbolic links');
      const target = await readlinkIn(dir, seg);
      lastLink = target;
      if (target.startsWith('/')) {
        queue.unshift(...this.segments(target, p));
        while (stack.length > 1) await stack.pop()!.close();
        names.length = 0;
      } else {
        queue.unshift(...target.split('/'));
      }
    };
    try {
      while (queue.length > 0) {
        const seg = queue.shift()!;
        if (seg === '' || seg === '.') continue;
        if (seg === '..') {
          if (names.length === 0) throw new SandboxPathError(p, 'leaves the repository', undefined, lastLink);
          await stack.pop()!.close();
          names.pop();
          continue;
        }
        const top = stack.at(-1)!;
        const isLast = queue.every((s) => s === '' || s === '.');
        if (isLast) {
          if (followLast && (await lstatIn(top, seg))?.isSymbolicLink()) {
            await follow(top, seg);
            continue;
          }
          return { dir: top, name: seg, rel: [...names, seg].join('/'), close };
        }
        let next: FileHandle;
        try {
          next = opts.create ? await openOrMakeDir(top, seg, this.owner) : await openDir(top, seg);
        } catch (err) {
          if (!isErr(err, 'ELOOP', 'ENOTDIR')) throw err;
          if (!(await lstatIn(top, seg))?.isSymbolicLink()) throw err;
          await follow(top, seg);
          continue;
        }
        stack.push(next);
        names.push(seg);
      }
      return { dir: stack.at(-1)!, name: '', rel: names.join('/'), close };
    } catch (err) {
      await close();
      throw err;
    }
  }

  private segments(p: string, original: string): string[] {
    if (!p.startsWith('/')) return p.split(/[/\\]/);
    for (const prefix of this.repoPrefixes) {
      const root = prefix.endsWith('/') ? prefix : `${prefix}/`;
      if (p === prefix || `${p}/` === root) return [];
      if (p.startsWith(root)) return p.slice(root.length).split('/');
    }
    if (p === original) throw new SandboxPathError(original, 'is outside the repository');
    throw new SandboxPathError(original, `points outside the repository (to ${p})`, undefined, p);
  }

  private async using<T>(p: string, opts: { followLast?: boolean; create?: boolean }, fn: (w: Walk) => Promise<T>): Promise<T> {
    // Making parents, a file where a directory should be stays ENOTDIR for the caller to explain.
    const keepNotDir = opts.create === true;
    const w = await notFound(p, () => this.walk(p, opts), keepNotDir);
    try {
      return await notFound(p, () => fn(w), keepNotDir);
    } finally {
      await w.close();
    }
  }

  private writable(p: string, w: Walk): void {
    if (w.rel === '') throw new SandboxPathError(p, 'is the repository root, not a file');
    if (w.rel === '.git' || w.rel.startsWith('.git/')) {
      throw new SandboxPathError(
        p,
        w.rel === p ? "is inside the sandbox's .git directory" : `resolves into the sandbox's .git directory (to ${w.rel})`,
        'File tools do not change .git: it holds the state of git commands. Use git itself (e.g. `git config`, `git checkout`) through a command.',
      );
    }
  }

  async readFile(p: string): Promise<Buffer> {
    return this.using(p, {}, async (w) => {
      const fh = w.name === '' ? undefined : await open(under(w.dir, w.name), O_FILE);
      if (!fh) throw new SandboxError('invalid-argument', `"${p}" is a directory, not a file.`);
      try {
        return await fh.readFile();
      } finally {
        await fh.close();
      }
    });
  }

  async writeFile(p: string, data: string | Uint8Array, opts: { mode?: number } = {}): Promise<void> {
    await this.using(p, { create: true }, async (w) => {
      this.writable(p, w);
      const existing = await lstatIn(w.dir, w.name);
      if (existing && !existing.isFile() && !existing.isDirectory() && !existing.isSymbolicLink()) {
        // A FIFO or a device is written to, not replaced.
        const fh = await open(under(w.dir, w.name), constants.O_WRONLY | constants.O_NOFOLLOW);
        try {
          await fh.writeFile(data);
          if (opts.mode !== undefined) await fh.chmod(opts.mode);
        } finally {
          await fh.close();
        }
        return;
      }
      // The new content replaces the file whole (see partial-write.ts); an existing file keeps its mode.
      const mode = opts.mode ?? (existing?.isFile() ? existing.mode & 0o7777 : undefined);
      const tmp = partialWritePath(w.name);
      const fh = await open(under(w.dir, tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
      try {
        try {
          if (this.owner !== undefined) await fh.chown(this.owner, this.owner);
          await fh.writeFile(data);
          // Created files get the umask applied; chmod sets the mode exactly.
          if (mode !== undefined) await fh.chmod(mode);
        } finally {
          await fh.close();
        }
        await rename(under(w.dir, tmp), under(w.dir, w.name));
      } catch (err) {
        await unlink(under(w.dir, tmp)).catch(() => undefined);
        throw err;
      }
    });
  }

  async chmod(p: string, mode: number): Promise<void> {
    await this.using(p, {}, async (w) => {
      this.writable(p, w);
      const fh = await open(w.name === '' ? self(w.dir) : under(w.dir, w.name), O_FILE);
      try {
        await fh.chmod(mode);
      } finally {
        await fh.close();
      }
    });
  }

  async mkdir(p: string): Promise<void> {
    await this.using(p, { create: true }, async (w) => {
      if (w.name === '') return;
      this.writable(p, w);
      await (await openOrMakeDir(w.dir, w.name, this.owner)).close();
    });
  }

  async remove(p: string, opts: { recursive?: boolean } = {}): Promise<void> {
    await this.using(p, { followLast: false }, async (w) => {
      if (w.rel === '') throw new SandboxPathError(p, 'is the repository root and cannot be removed');
      this.writable(p, w);
      const st = await lstatIn(w.dir, w.name);
      if (!st) throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      if (st.isDirectory() && !opts.recursive) {
        throw new SandboxError('invalid-argument', `"${p}" is a directory; pass { recursive: true } to remove it and its contents.`);
      }
      await removeIn(w.dir, w.name);
    });
  }

  /**
   * Renames; a directory rename on a user-namespace overlay fails with EXDEV (no redirect_dir),
   * so it falls back to copy + delete, which git's rename detection still reports as renames.
   */
  async rename(from: string, to: string): Promise<void> {
    await this.using(from, { followLast: false }, async (src) => {
      this.writable(from, src);
      if (!(await lstatIn(src.dir, src.name))) throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      await this.using(to, { followLast: false, create: true }, async (dst) => {
        this.writable(to, dst);
        try {
          await rename(under(src.dir, src.name), under(dst.dir, dst.name));
        } catch (err) {
          if (!isErr(err, 'EXDEV')) throw err;
          await copyIn(src.dir, src.name, dst.dir, dst.name, this.owner);
          await removeIn(src.dir, src.name);
        }
      });
    });
  }

  async stat(p: string): Promise<FileStat> {
    return this.using(p, { followLast: false }, async (w) => {
      const st = w.name === '' ? await w.dir.stat() : await lstatIn(w.dir, w.name);
      if (!st) throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      return { type: entryType(st), size: st.size, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs };
    });
  }

  async exists(p: string): Promise<boolean> {
    try {
      const w = await this.walk(p);
      try {
        return w.name === '' || (await lstatIn(w.dir, w.name)) !== undefined;
      } finally {
        await w.close();
      }
    } catch (err) {
      if (err instanceof SandboxPathError) throw err;
      if (isErr(err, 'ENOENT', 'ENOTDIR', 'ELOOP')) return false;
      throw err;
    }
  }

  /** Lists a directory (recursively on request, never descending into `.git`). */
  async list(p = '', opts: { recursive?: boolean } = {}): Promise<DirEntry[]> {
    return this.using(p, {}, async (w) => {
      const out: DirEntry[] = [];
      const walkDir = async (dir: FileHandle, relDir: string): Promise<void> => {
        const entries = await readdir(self(dir), { withFileTypes: true });
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        for (const e of entries) {
          const entryRel = relDir === '' ? e.name : `${relDir}/${e.name}`;
          const type = entryType(e);
          out.push({ path: entryRel, name: e.name, type });
          if (opts.recursive && type === 'dir' && e.name !== '.git') {
            const sub = await openDir(dir, e.name).catch(() => undefined);
            if (!sub) continue;
            try {
              await walkDir(sub, entryRel);
            } finally {
              await sub.close();
            }
          }
        }
      };
      if (w.name === '') {
        await walkDir(w.dir, w.rel);
      } else {
        const dir = await openDir(w.dir, w.name);
        try {
          await walkDir(dir, w.rel);
        } finally {
          await dir.close();
        }
      }
      return out;
    });
  }
}

/** Removes `name` in `dir`, a whole tree if it is a directory, never following a symlink. */
async function removeIn(dir: FileHandle, name: string): Promise<void> {
  let sub: FileHandle;
  try {
    sub = await openDir(dir, name);
  } catch (err) {
    if (!isErr(err, 'ELOOP', 'ENOTDIR')) throw err;
    await unlink(under(dir, name));
    return;
  }
  try {
    for (const e of await readdir(self(sub))) await removeIn(sub, e);
  } finally {
    await sub.close();
  }
  await rmdir(under(dir, name));
}

/** Copies `srcName` in `srcDir` to `dstName` in `dstDir` (a whole tree; symlinks as links; modes and times kept). */
async function copyIn(srcDir: FileHandle, srcName: string, dstDir: FileHandle, dstName: string, owner: number | undefined): Promise<void> {
  const st = await lstatIn(srcDir, srcName);
  if (!st) return;
  if (st.isSymbolicLink()) {
    await symlink(await readlinkIn(srcDir, srcName), under(dstDir, dstName));
    if (owner !== undefined) await lchown(under(dstDir, dstName), owner, owner);
    return;
  }
  if (st.isDirectory()) {
    await mkdir(under(dstDir, dstName), st.mode & 0o7777);
    if (owner !== undefined) await lchown(under(dstDir, dstName), owner, owner);
    const from = await openDir(srcDir, srcName);
    const to = await openDir(dstDir, dstName).catch(async (err: unknown) => {
      await from.close();
      throw err;
    });
    try {
      for (const e of await readdir(self(from))) await copyIn(from, e, to, e, owner);
      await to.utimes(st.atime, st.mtime);
    } finally {
      await from.close();
      await to.close();
    }
    return;
  }
  const src = await open(under(srcDir, srcName), O_FILE);
  try {
    const dst = await open(under(dstDir, dstName), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, st.mode & 0o7777);
    try {
      if (owner !== undefined) await dst.chown(owner, owner);
      await dst.writeFile(await src.readFile());
      await dst.chmod(st.mode & 0o7777);
      await dst.utimes(st.atime, st.mtime);
    } finally {
      await dst.close();
    }
  } finally {
    await src.close();
  }
}

async function notFound<T>(p: string, fn: () => Promise<T>, keepNotDir = false): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isErr(err, 'ENOENT') || (!keepNotDir && isErr(err, 'ENOTDIR'))) {
      throw new SandboxError('not-found', `"${p}" does not exist in the sandbox. Check the path (list the directory to see what is there).`, {
        cause: err,
      });
    }
    if (isErr(err, 'ELOOP')) {
      throw new SandboxError('invalid-argument', `"${p}" changed into a symbolic link while it was being used; try again.`, { cause: err });
    }
    throw err;
  }
}
