import { lstat } from 'node:fs/promises';
import { names } from './layer-changes.js';
import { fsPath } from './utf8-names.js';

export type EntryKind = 'missing' | 'dir' | 'file' | 'symlink' | 'other';

/** A directory and those above it: all directories, one missing, or the first one that is not a directory. */
type DirsAbove = 'dirs' | 'missing' | { blocked: string };

/**
 * What a work tree (a host directory) holds at repository-relative paths, component by
 * component and without following a link, as git's own work tree code sees it: git refuses a
 * path beyond a symlink, and a file cannot be written where a directory is or under a file. A
 * plain stat of the whole path would follow a link on the way and look wherever it points.
 * Answers are kept: make one per diff or apply.
 */
export class WorkTreeShape {
  private readonly kinds = new Map<string, Promise<EntryKind>>();
  private readonly dirs = new Map<string, Promise<DirsAbove>>();

  constructor(private readonly root: string) {}

  /** The entry at `rel` itself (meaningful when blockedAt(rel) is undefined). */
  kind(rel: string): Promise<EntryKind> {
    let known = this.kinds.get(rel);
    if (known === undefined) {
      known = lstatKind(fsPath(this.root, rel));
      this.kinds.set(rel, known);
    }
    return known;
  }

  /**
   * The first directory above `rel`, outermost first, that is there but not a directory (a
   * symlink, a file): what stands in the way of `rel`. Undefined when each is a directory or
   * missing (then so is everything below it).
   */
  async blockedAt(rel: string): Promise<string | undefined> {
    const slash = rel.lastIndexOf('/');
    if (slash <= 0) return undefined;
    const state = await this.within(rel.slice(0, slash));
    return typeof state === 'object' ? state.blocked : undefined;
  }

  /**
   * The directories `dir` and above as a whole, kept per directory: a path then costs one lookup
   * of its own directory, however deep it is and however many paths share that directory.
   */
  private within(dir: string): Promise<DirsAbove> {
    let known = this.dirs.get(dir);
    if (known === undefined) {
      known = (async (): Promise<DirsAbove> => {
        const slash = dir.lastIndexOf('/');
        const above = slash > 0 ? await this.within(dir.slice(0, slash)) : 'dirs';
        if (above !== 'dirs') return above;
        const kind = await this.kind(dir);
        return kind === 'dir' ? 'dirs' : kind === 'missing' ? 'missing' : { blocked: dir };
      })();
      this.dirs.set(dir, known);
    }
    return known;
  }

  /**
   * Whether the directory at `rel` holds anything but the files in `leaving` (each with its
   * repository-relative path): what would still be there once they are gone, keeping a file from
   * taking the directory's place. git removes the directories a removal empties, and an empty
   * one where it writes a file, but not an empty directory further down. Stops at the first.
   */
  async holdsMoreThan(rel: string, leaving: ReadonlySet<string>): Promise<boolean> {
    return this.staysWith(rel, leaving, true);
  }

  private async staysWith(rel: string, leaving: ReadonlySet<string>, top: boolean): Promise<boolean> {
    // Unreadable: whatever is in there stays.
    const found = await names(fsPath(this.root, rel)).catch(() => undefined);
    if (found === undefined || (found.length === 0 && !top)) return true;
    for (const name of found) {
      const p = `${rel}/${name}`;
      if (leaving.has(p)) continue;
      if ((await this.kind(p)) !== 'dir' || (await this.staysWith(p, leaving, false))) return true;
    }
    return false;
  }
}

async function lstatKind(p: string | Buffer): Promise<EntryKind> {
  const st = await lstat(p).catch(() => undefined);
  if (st === undefined) return 'missing';
  if (st.isDirectory()) return 'dir';
  if (st.isSymbolicLink()) return 'symlink';
  return st.isFile() ? 'file' : 'other';
}
