import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathExists, removeTree } from './fs-util.js';
import { readJson, writeJsonAtomic } from './registry.js';
import type { RepoInfo } from './repo.js';

/**
 * Checked-out bases left by closed sessions, kept per repository for the next session of it.
 *
 * A session's base is a full checkout of its snapshot: at 50,000 files, writing it (and deleting
 * it at close) takes seconds, every session. A session that closes without keeping its storage
 * moves its base here instead (a rename: O(1)); the next session of the same repository takes it
 * (another rename) and moves it onto its own snapshot with a one-way `read-tree -m -u` over the
 * base's own index, which reads and writes only the paths whose content differs: the cost follows
 * the change, not the repository. That trusts the base's files to be what its index says, which
 * holds because nothing but that checkout ever writes a base: in a session it is a read-only lower
 * layer (or the source of copies), and here it belongs to no session. Bases in use stay inside
 * their session's directory, where nothing else touches them. A crash while a base moves leaves it in the session
 * directory (removed with it by gc) or under a temporary name here (removed by gc), never a half
 * base that looks whole.
 *
 * Layout: `<stateDir>/bases/<repo key>/<entry>/{base/, base.index, base.json}`.
 */

const POOL_DIR = 'bases';
const META_FILE = 'base.json';
/** Bases kept per repository: one per session that may run at the same time, within reason. */
const KEEP_PER_REPO = 2;
// Entries being written or taken carry a dot; one older than this was left by a crash.
const PARTIAL_GRACE_MS = 10 * 60_000;

interface PoolMeta {
  version: 1;
  repo: string;
  /** The tree the base holds (its index says the same, path by path). */
  tree: string;
  returnedAt: string;
}

function repoKey(repo: RepoInfo): string {
  return createHash('sha256').update(`${repo.root}\0${repo.commonDir}`).digest('hex').slice(0, 24);
}

function poolOf(stateDir: string, repo: RepoInfo): string {
  return path.join(stateDir, POOL_DIR, repoKey(repo));
}

/**
 * Moves a pooled base of `repo` to `baseDir` with its index at `baseIndex`, if there is one;
 * returns whether it did. The caller then brings it to its snapshot (takeSnapshot's base). Two
 * sessions never get the same base: taking one is a rename, which only one of them wins.
 */
export async function takePooledBase(stateDir: string, repo: RepoInfo, baseDir: string, baseIndex: string): Promise<boolean> {
  // Synchronous (renames and a small read): the snapshot's git process, which waits for this,
  // then starts without waiting for this process's event loop (see writeJsonAtomic in registry.ts).
  const pool = poolOf(stateDir, repo);
  let entries: string[];
  try {
    entries = readdirSync(pool).filter((n) => !n.startsWith('.')).sort().reverse();
  } catch {
    return false;
  }
  for (const entry of entries) {
    const taken = path.join(path.dirname(baseDir), `.pooled-${randomBytes(4).toString('hex')}`);
    try {
      renameSync(path.join(pool, entry), taken);
    } catch {
      continue; // Another session took it first.
    }
    let meta: PoolMeta | undefined;
    try {
      meta = JSON.parse(readFileSync(path.join(taken, META_FILE), 'utf8')) as PoolMeta;
    } catch {
      meta = undefined;
    }
    const whole = meta?.version === 1 && meta.repo === repo.root && existsSync(path.join(taken, 'base.index'));
    if (whole) {
      renameSync(path.join(taken, 'base'), baseDir);
      renameSync(path.join(taken, 'base.index'), baseIndex);
      rmSync(taken, { recursive: true, force: true });
      return true;
    }
    await removeTree(taken);
  }
  return false;
}

/**
 * Moves a closing session's base (not mounted or used by anything any more) into the pool of its
 * repository, made whole under a temporary name and renamed into place. Keeps at most
 * KEEP_PER_REPO bases per repository: an extra one is deleted instead.
 */
export async function returnBaseToPool(stateDir: string, repo: RepoInfo, baseDir: string, baseIndex: string, tree: string): Promise<void> {
  if (!(await pathExists(baseDir)) || !(await pathExists(baseIndex))) return;
  const pool = poolOf(stateDir, repo);
  await mkdir(pool, { recursive: true });
  const present = (await readdir(pool)).filter((n) => !n.startsWith('.'));
  if (present.length >= KEEP_PER_REPO) return;
  // Names sort by age: the newest base is taken first (most likely the closest to the next snapshot).
  const name = `${Date.now().toString(36).padStart(10, '0')}-${randomBytes(3).toString('hex')}`;
  const partial = path.join(pool, `.${name}.partial`);
  await mkdir(partial);
  try {
    await rename(baseDir, path.join(partial, 'base'));
    await rename(baseIndex, path.join(partial, 'base.index'));
    const meta: PoolMeta = { version: 1, repo: repo.root, tree, returnedAt: new Date().toISOString() };
    await writeJsonAtomic(path.join(partial, META_FILE), meta);
    await rename(partial, path.join(pool, name));
  } catch (err) {
    await removeTree(partial).catch(() => undefined);
    throw err;
  }
}

/**
 * Removes pooled bases nobody will take: of repositories that no longer exist, returned more than
 * `keepDays` ago, or (with `all`) every one; and what a crash left half moved.
 */
export async function collectPooledBases(stateDir: string, opts: { keepDays: number; all?: boolean }): Promise<string[]> {
  const removed: string[] = [];
  const root = path.join(stateDir, POOL_DIR);
  for (const key of await readdir(root).catch(() => [] as string[])) {
    const pool = path.join(root, key);
    for (const entry of await readdir(pool).catch(() => [] as string[])) {
      const dir = path.join(pool, entry);
      if (entry.startsWith('.')) {
        const st = await stat(dir).catch(() => undefined);
        if (st && Date.now() - st.mtimeMs > PARTIAL_GRACE_MS) {
          await removeTree(dir);
          removed.push(dir);
        }
        continue;
      }
      const meta = (await readJson(path.join(dir, META_FILE)).catch(() => undefined)) as PoolMeta | undefined;
      const age = meta ? Date.now() - Date.parse(meta.returnedAt) : Infinity;
      const gone = !meta || !(await stat(meta.repo).catch(() => undefined))?.isDirectory();
      if (opts.all || gone || !(age <= opts.keepDays * 24 * 60 * 60_000)) {
        // Renamed away first, so a session taking it meanwhile either has it whole or not at all.
        const doomed = path.join(pool, `.${entry}.removing`);
        if (await rename(dir, doomed).then(() => true, () => false)) {
          await removeTree(doomed);
          removed.push(dir);
        }
      }
    }
  }
  return removed;
}
