import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { tooLongPrefix } from './long-paths.js';
import { escapedName, fsPath } from './utf8-names.js';

export interface ChangeScan {
  /** The sandbox's own layer directories (host paths): candidates come only from these. */
  ownLayers: readonly string[];
  /** Host path of the view before the change (the lower view at spawn, or the base). */
  lower: string;
  /** Host path of the merged view now. */
  merged: string;
  /** Repo-relative paths to leave out with everything below them (.git, node_modules). */
  excluded: (rel: string) => boolean;
  /**
   * Told what to report (see tooLongPrefix) for each path too long to be carried: it is neither
   * read nor listed, and neither is anything below it.
   */
  tooLong: (prefix: string) => void;
}

type Kind = 'dir' | 'file' | 'missing';

async function kind(p: string | Buffer): Promise<Kind> {
  const st = await lstat(p).catch(() => undefined);
  if (!st) return 'missing';
  return st.isDirectory() ? 'dir' : 'file';
}

const join = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);

// A name that is not UTF-8 comes out of a plain readdir with U+FFFD in it, which names no file:
// only a directory where that happens is read again for its names' bytes (see utf8-names.ts).
const REPLACED = '\uFFFD';

/** The names in a directory, escaped where they are not UTF-8. */
export async function names(dir: string | Buffer): Promise<string[]> {
  const plain = await readdir(dir);
  if (!plain.some((n) => n.includes(REPLACED))) return plain;
  return (await readdir(dir, { encoding: 'buffer' })).map(escapedName);
}

/**
 * Whether `rel` is too long to be carried; if so, reported (see ChangeScan.tooLong). Checked
 * before a path is looked at: the kernel refuses the longest, and a walk that went on would meet
 * each directory of a deep chain once per directory above it.
 */
function skipTooLong(scan: Pick<ChangeScan, 'tooLong'>, rel: string, isDir: boolean): boolean {
  const prefix = tooLongPrefix(rel);
  if (prefix === undefined) return false;
  scan.tooLong(prefix === rel && isDir ? `${rel}/` : prefix);
  return true;
}

/** names(), each with whether it is a directory; an unreadable directory has none. */
async function entries(dir: string | Buffer): Promise<Array<{ name: string; isDir: boolean }>> {
  const plain = await readdir(dir, { withFileTypes: true }).catch(() => []);
  if (!plain.some((e) => e.name.includes(REPLACED))) return plain.map((e) => ({ name: e.name, isDir: e.isDirectory() }));
  const raw = await readdir(dir, { encoding: 'buffer', withFileTypes: true }).catch(() => []);
  return raw.map((e) => ({ name: escapedName(e.name), isDir: e.isDirectory() }));
}

/**
 * Repo-relative paths of files (and symlinks) that differ between the lower and merged views,
 * names that are not UTF-8 escaped (see utf8-names.ts: such a change is reported, never lost).
 * Cost follows the size of the sandbox's own layers, not of the repository: only paths present
 * in those layers are candidates. Comparing directory listings of both views catches whiteouts,
 * opaque directories and redirects without reading overlay xattrs, which Node cannot.
 */
export async function changedFiles(scan: ChangeScan): Promise<string[]> {
  const candDirs = new Set<string>();
  const candOther = new Set<string>();
  for (const layer of scan.ownLayers) await collectCandidates(layer, '', scan, candDirs, candOther);

  const changed = new Set<string>();
  const addAllUnder = async (root: string, rel: string): Promise<void> => {
    if (scan.excluded(rel)) return;
    const st = await lstat(fsPath(root, rel)).catch(() => undefined);
    if (skipTooLong(scan, rel, st?.isDirectory() === true) || !st) return;
    if (!st.isDirectory()) {
      changed.add(rel);
      return;
    }
    for (const name of await names(fsPath(root, rel))) await addAllUnder(root, join(rel, name));
  };

  // Directories whose whole content, in both views, is already among the changes (walked whole
  // here, or below one that was): their candidates would only be walked again. Candidates come
  // after their parent directories (the walk that found them passed through those).
  const walkedWhole = new Set<string>();
  const parentWalked = (p: string): boolean => p !== '' && walkedWhole.has(p.slice(0, Math.max(0, p.lastIndexOf('/'))));
  for (const d of candDirs) {
    if (parentWalked(d)) {
      walkedWhole.add(d);
      continue;
    }
    const [lo, me] = await Promise.all([kind(fsPath(scan.lower, d)), kind(fsPath(scan.merged, d))]);
    if (lo === 'dir' && me === 'dir') {
      const [loNames, meNames] = await Promise.all([names(fsPath(scan.lower, d)), names(fsPath(scan.merged, d))]);
      const meSet = new Set(meNames);
      const loSet = new Set(loNames);
      for (const n of loNames) if (!meSet.has(n)) await addAllUnder(scan.lower, join(d, n));
      for (const n of meNames) {
        const p = join(d, n);
        if (!loSet.has(n) && !candDirs.has(p) && !candOther.has(p)) await addAllUnder(scan.merged, p);
      }
      continue;
    }
    await addAllUnder(scan.lower, d);
    await addAllUnder(scan.merged, d);
    walkedWhole.add(d);
  }
  for (const f of candOther) {
    if (parentWalked(f)) continue;
    await addAllUnder(scan.lower, f);
    await addAllUnder(scan.merged, f);
  }

  const real: string[] = [];
  await Promise.all(
    [...changed].map(async (p) => {
      const [lo, me] = [fsPath(scan.lower, p), fsPath(scan.merged, p)];
      // git tracks neither FIFOs, sockets nor devices (`add -A` skips them; update-index fails).
      if ((await isSpecial(lo)) || (await isSpecial(me))) return;
      if (!(await sameEntry(lo, me))) real.push(p);
    }),
  );
  return real.sort();
}

async function isSpecial(p: string | Buffer): Promise<boolean> {
  const st = await lstat(p).catch(() => undefined);
  return st !== undefined && !st.isFile() && !st.isSymbolicLink() && !st.isDirectory();
}

async function collectCandidates(
  layerRoot: string,
  rel: string,
  scan: Pick<ChangeScan, 'excluded' | 'tooLong'>,
  dirs: Set<string>,
  others: Set<string>,
): Promise<void> {
  const found = await entries(fsPath(layerRoot, rel));
  if (found.length === 0 && rel === '') return;
  dirs.add(rel);
  for (const e of found) {
    const p = join(rel, e.name);
    if (scan.excluded(p) || skipTooLong(scan, p, e.isDir)) continue;
    if (e.isDir) await collectCandidates(layerRoot, p, scan, dirs, others);
    else others.add(p);
  }
}

/**
 * Whether two paths hold the same entry as git sees it: same type, same executable bit, same
 * bytes or link target (both missing counts as the same). Drops copy-ups without a real change
 * (an open for writing, a touch, a write of the same bytes).
 */
export async function sameEntry(a: string | Buffer, b: string | Buffer): Promise<boolean> {
  const [sa, sb] = await Promise.all([lstat(a).catch(() => undefined), lstat(b).catch(() => undefined)]);
  if (!sa || !sb) return !sa && !sb;
  if (sa.isSymbolicLink() || sb.isSymbolicLink()) {
    // Targets as bytes: two that differ only where they are not UTF-8 would decode alike.
    return sa.isSymbolicLink() && sb.isSymbolicLink() && (await readlink(a, 'buffer')).equals(await readlink(b, 'buffer'));
  }
  if (!sa.isFile() || !sb.isFile()) return false;
  if (sa.size !== sb.size || (sa.mode & 0o111) !== (sb.mode & 0o111)) return false;
  const [ba, bb] = await Promise.all([readFile(a), readFile(b)]);
  return ba.equals(bb);
}
