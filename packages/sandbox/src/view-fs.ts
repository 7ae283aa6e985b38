import { chmod, cp, lstat, mkdir, readdir, readFile, readlink, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SandboxError, SandboxPathError } from './errors.js';
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

function entryType(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryType {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'other';
}

/**
 * File operations on a sandbox's merged view. Symlinks are resolved here, component by
 * component, as if the view were mounted at the repository path: the host path we go through
 * (the holder's proc root link, or a copy) would otherwise send absolute links to the user's real files.
 */
export class ViewFs {
  constructor(
    private readonly hostRoot: () => Promise<string>,
    /** Absolute prefixes that mean "the repository root" inside the view. */
    private readonly repoPrefixes: readonly string[],
  ) {}

  /** Repo-relative, symlink-free path; throws when it would leave the repository. */
  async resolve(p: string, opts: { followLast?: boolean } = {}): Promise<{ host: string; rel: string }> {
    const root = await this.hostRoot();
    const queue = this.segments(p, p);
    const cur: string[] = [];
    let hops = 0;
    while (queue.length > 0) {
      const seg = queue.shift()!;
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (cur.length === 0) throw new SandboxPathError(p, 'leaves the repository');
        cur.pop();
        continue;
      }
      const isLast = queue.length === 0;
      const candidate = [...cur, seg];
      if (isLast && opts.followLast === false) {
        cur.push(seg);
        break;
      }
      const st = await lstat(path.join(root, ...candidate)).catch(() => undefined);
      if (!st?.isSymbolicLink()) {
        cur.push(seg);
        continue;
      }
      if (++hops > MAX_SYMLINK_HOPS) throw new SandboxPathError(p, 'has too many levels of symbolic links');
      const target = await readlink(path.join(root, ...candidate));
      if (path.isAbsolute(target)) {
        queue.unshift(...this.segments(target, p));
        cur.length = 0;
      } else {
        queue.unshift(...target.split('/'));
      }
    }
    const rel = cur.join('/');
    return { host: rel === '' ? root : path.join(root, rel), rel };
  }

  /**
   * resolve() for an operation that changes the view. The sandbox's `.git` is refused (symlinks
   * resolved first, so a link into it is refused too): it belongs to the git commands run in the
   * sandbox, and config or hooks written there are programs git would run.
   */
  private async resolveForChange(p: string, opts: { followLast?: boolean } = {}): Promise<{ host: string; rel: string }> {
    const resolved = await this.resolve(p, opts);
    const { rel } = resolved;
    if (rel === '.git' || rel.startsWith('.git/')) {
      throw new SandboxPathError(
        p,
        rel === p ? "is inside the sandbox's .git directory" : `resolves into the sandbox's .git directory (to ${rel})`,
        'File tools do not change .git: it holds the state of git commands. Use git itself (e.g. `git config`, `git checkout`) through a command.',
      );
    }
    return resolved;
  }

  private segments(p: string, original: string): string[] {
    if (!path.isAbsolute(p)) return p.split(/[/\\]/);
    for (const prefix of this.repoPrefixes) {
      const rel = path.relative(prefix, p);
      if (rel === '') return [];
      if (!rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep);
    }
    throw new SandboxPathError(original, p === original ? 'is outside the repository' : `points outside the repository (to ${p})`);
  }

  async readFile(p: string): Promise<Buffer> {
    const { host } = await this.resolve(p);
    return notFound(p, () => readFile(host));
  }

  async writeFile(p: string, data: string | Uint8Array, opts: { mode?: number } = {}): Promise<void> {
    const { host, rel } = await this.resolveForChange(p);
    if (rel === '') throw new SandboxPathError(p, 'is the repository root, not a file');
    await mkdir(path.dirname(host), { recursive: true });
    const existing = await stat(host).catch(() => undefined);
    if (existing && !existing.isFile() && !existing.isDirectory()) {
      // A FIFO or a device is written to, not replaced.
      await writeFile(host, data);
      if (opts.mode !== undefined) await chmod(host, opts.mode);
      return;
    }
    // The new content replaces the file whole (see partial-write.ts); an existing file keeps its mode.
    const mode = opts.mode ?? (existing?.isFile() ? existing.mode & 0o7777 : undefined);
    const tmp = partialWritePath(host);
    try {
      await writeFile(tmp, data, { flag: 'wx' });
      // Created files get the umask applied; chmod sets the mode exactly.
      if (mode !== undefined) await chmod(tmp, mode);
      await rename(tmp, host);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async chmod(p: string, mode: number): Promise<void> {
    const { host } = await this.resolveForChange(p);
    await notFound(p, () => chmod(host, mode));
  }

  async mkdir(p: string): Promise<void> {
    const { host } = await this.resolveForChange(p);
    await mkdir(host, { recursive: true });
  }

  async remove(p: string, opts: { recursive?: boolean } = {}): Promise<void> {
    const { host, rel } = await this.resolveForChange(p, { followLast: false });
    if (rel === '') throw new SandboxPathError(p, 'is the repository root and cannot be removed');
    const st = await notFound(p, () => lstat(host));
    if (st.isDirectory() && !opts.recursive) {
      throw new SandboxError('invalid-argument', `"${p}" is a directory; pass { recursive: true } to remove it and its contents.`);
    }
    await rm(host, { recursive: true, force: false });
  }

  /**
   * Renames; a directory rename on a user-namespace overlay fails with EXDEV (no redirect_dir),
   * so it falls back to copy + delete, which git's rename detection still reports as renames.
   */
  async rename(from: string, to: string): Promise<void> {
    const src = await this.resolveForChange(from, { followLast: false });
    const dst = await this.resolveForChange(to, { followLast: false });
    await notFound(from, () => lstat(src.host));
    await mkdir(path.dirname(dst.host), { recursive: true });
    try {
      await rename(src.host, dst.host);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      await cp(src.host, dst.host, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      await rm(src.host, { recursive: true });
    }
  }

  async stat(p: string): Promise<FileStat> {
    const { host } = await this.resolve(p, { followLast: false });
    const st = await notFound(p, () => lstat(host));
    return { type: entryType(st), size: st.size, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs };
  }

  async exists(p: string): Promise<boolean> {
    const { host } = await this.resolve(p);
    return (await stat(host).catch(() => undefined)) !== undefined;
  }

  /** Lists a directory (recursively on request, never descending into `.git`). */
  async list(p = '', opts: { recursive?: boolean } = {}): Promise<DirEntry[]> {
    const { host, rel } = await this.resolve(p);
    const out: DirEntry[] = [];
    const walk = async (hostDir: string, relDir: string): Promise<void> => {
      const entries = await notFound(relDir || '.', () => readdir(hostDir, { withFileTypes: true }));
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        const entryRel = relDir === '' ? e.name : `${relDir}/${e.name}`;
        const type = entryType(e);
        out.push({ path: entryRel, name: e.name, type });
        if (opts.recursive && type === 'dir' && !(e.name === '.git')) {
          await walk(path.join(hostDir, e.name), entryRel);
        }
      }
    };
    await walk(host, rel);
    return out;
  }
}

async function notFound<T>(p: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new SandboxError('not-found', `"${p}" does not exist in the sandbox. Check the path (list the directory to see what is there).`, {
        cause: err,
      });
    }
    throw err;
  }
}
