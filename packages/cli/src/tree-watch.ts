import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';

export interface TreeWatchOptions {
  /** The user's working tree (the repository root). */
  root: string;
  /**
   * The truth: which files differ from the sandboxes' base now. The watcher only says when to
   * ask, so an edit undone, or one made while nothing watched (between runs), is still right.
   */
  changed: () => Promise<string[]>;
  /** The list changed (and once at the start). */
  onChange(paths: string[]): void;
  /** Watching or asking failed (too many files for the system's watch limit...): said once. */
  onError(message: string): void;
  /** Directories never watched, repository-relative (dependency trees, build output). */
  skipDirs?: readonly string[];
  /** Quiet time after the last file event before asking (default 250 ms, at least 20). */
  settleMs?: number;
}

export interface TreeWatch {
  /** Resolves once the watcher is in place (edits from then on are seen) and the first list told. */
  ready: Promise<void>;
  /** Ask again now (after the base moved: /refresh). */
  recheck(): Promise<void>;
  close(): Promise<void>;
}

const ALWAYS_SKIPPED = ['.git', '.infinity', 'node_modules'];
const MIN_SETTLE_MS = 20;

/** Which absolute paths the watcher leaves alone: our state, git's, dependency trees. */
export function skipper(root: string, skipDirs: readonly string[]): (p: string) => boolean {
  const skipped = new Set(ALWAYS_SKIPPED);
  const skippedPaths = (skipDirs ?? []).map((d) => path.resolve(root, d));
  return (p) => {
    if (skippedPaths.some((d) => p === d || p.startsWith(d + path.sep))) return true;
    const rel = path.relative(root, p);
    return rel.split(path.sep).some((part) => skipped.has(part));
  };
}

/**
 * Watches the user's working tree for the session (docs/architecture.md, *CLI contracts*): file events, coalesced, trigger
 * one `changed()` at a time; listeners hear the list only when it differs from the last one.
 */
export function watchTree(o: TreeWatchOptions): TreeWatch {
  let last: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** Asked for since the last comparison started. */
  let dirty = false;
  let running: Promise<void> = Promise.resolve();
  let active = false;
  let failed = false;
  let closed = false;

  const fail = (message: string) => {
    if (failed || closed) return;
    failed = true;
    o.onError(message);
  };

  // One comparison at a time; asks that come meanwhile make one more. `active` drops in the same
  // synchronous step as the last look at `dirty`, so no ask falls between the two.
  const loop = async (): Promise<void> => {
    try {
      while (dirty && !closed) {
        dirty = false;
        try {
          const paths = [...(await o.changed())].sort();
          const key = paths.join('\0');
          if (!closed && key !== last) {
            last = key;
            o.onChange(paths);
          }
        } catch (err) {
          fail(`Could not compare your working tree with the session's base: ${(err as Error).message}`);
        }
      }
    } finally {
      active = false;
    }
  };

  const check = (): Promise<void> => {
    dirty = true;
    if (!active) {
      active = true;
      running = loop();
    }
    return running;
  };

  const schedule = () => {
    clearTimeout(timer);
    // Events come in bursts (a save is several): ask once they have settled.
    timer = setTimeout(() => void check(), Math.max(MIN_SETTLE_MS, o.settleMs ?? 250));
  };

  const skip = skipper(o.root, o.skipDirs ?? []);
  // Directories only: a directory's watch already reports every change of a file in it (as a
  // raw event), and a watch per file costs a handle and memory per file: at 50,000 files chokidar
  // took 130 MB of heap and 5 s to start that way, against 2 MB and 2 s for the directories.
  const watcher: FSWatcher = watch(o.root, {
    ignoreInitial: true,
    ignored: (p, stats) => skip(p) || stats?.isFile() === true,
  });
  watcher.on('raw', (_event, name, details) => {
    const dir = (details as { watchedPath?: string } | undefined)?.watchedPath;
    if (dir === undefined || (name && skip(path.join(dir, name)))) return;
    schedule();
  });
  watcher.on('all', schedule);
  watcher.on('error', (err) => {
    const code = (err as NodeJS.ErrnoException).code;
    fail(
      code === 'ENOSPC'
        ? 'Your edits to the working tree are not tracked: the system limit on watched files is reached (raise fs.inotify.max_user_watches).'
        : `Your edits to the working tree are not tracked: ${(err as Error).message}`,
    );
    void watcher.close();
  });
  // The list as it is once watching (files edited since the base was taken, maybe in an earlier
  // run, or while the watcher was still scanning the tree).
  const ready = new Promise<void>((resolve) => watcher.once('ready', resolve)).then(check);

  return {
    ready,
    recheck: check,
    async close() {
      closed = true;
      clearTimeout(timer);
      await watcher.close();
      await running;
    },
  };
}
