import { createHash, type Hash } from 'node:crypto';
import { lstat, readFile, readlink } from 'node:fs/promises';
import { names as namesIn } from './layer-changes.js';
import { fsPath } from './utf8-names.js';

/**
 * What an overlay sandbox's own upper layer holds, boiled down to a digest: equal digests taken
 * before and after a command mean the command changed nothing a diff reads, so diffs made before
 * it still hold (see Sandbox.exec). Of the merged view only the upper layer can change while the
 * sandbox lives (its lower layers are the read-only base and frozen layers), and a write through
 * the merged view lands there. The sandbox's own .git and node_modules have overlays of their
 * own, which diffs never read (they leave those paths out, and take ignore rules and config from
 * the session's git dir): a command writing only there changes no diff.
 *
 * Every entry's metadata goes in, the change time (ctime) above all: no process can set it, and
 * any change to an entry (content, mode, name, links, attributes) sets it to the clock's time.
 * That time is coarse on many kernels (a tick, up to 10 ms), so an entry changed less than
 * FRESH_MS before the first stamp could be changed again without its ctime moving. For those
 * "fresh" entries the stamp also holds what the view shows: a file's bytes, a link's target, a
 * directory's listing in the merged view (which catches a directory made opaque, hiding the lower
 * layers, by an overlay attribute Node cannot read).
 */
export interface ViewStamp {
  digest: string;
  /** Entries changed at or after this time (ns since the epoch) are fresh (see above). */
  freshSinceNs: bigint;
}

/** Longer than any kernel's timestamp tick (HZ >= 100), with room for clock granularity. */
const FRESH_MS = 50n;
/** Past this many entries, or bytes of fresh files, the stamp is not worth it: undefined. */
const MAX_ENTRIES = 4096;
const MAX_FRESH_BYTES = 4 * 1024 * 1024;

/**
 * The stamp of `upper` (an overlay upper directory) whose merged view is at `merged`, or
 * undefined when it is too big to stamp cheaply. A stamp meant to be compared with an earlier one
 * must be taken with that one's `freshSinceNs` (`since`), so both treat the same entries as fresh.
 */
export async function stampUpper(upper: string, merged: string, since?: ViewStamp): Promise<ViewStamp | undefined> {
  const freshSinceNs = since?.freshSinceNs ?? BigInt(Date.now()) * 1_000_000n - FRESH_MS * 1_000_000n;
  const hash = createHash('sha256');
  const budget = { entries: MAX_ENTRIES, bytes: MAX_FRESH_BYTES };
  // An entry vanishing under the walk (a command still running) makes no stamp: nothing holds then.
  const ok = await stampEntry(upper, merged, '', freshSinceNs, hash, budget).catch(() => false);
  return ok ? { digest: hash.digest('hex'), freshSinceNs } : undefined;
}

async function stampEntry(
  upper: string,
  merged: string,
  rel: string,
  freshSinceNs: bigint,
  hash: Hash,
  budget: { entries: number; bytes: number },
): Promise<boolean> {
  if (--budget.entries < 0) return false;
  const at = fsPath(upper, rel);
  const st = await lstat(at, { bigint: true });
  hash.update(`${rel}\0${st.mode}\0${st.rdev}\0${st.ino}\0${st.nlink}\0${st.size}\0${st.mtimeNs}\0${st.ctimeNs}\0`);
  const fresh = st.ctimeNs >= freshSinceNs;
  if (st.isDirectory()) {
    const names = (await namesIn(at)).sort();
    if (fresh) {
      const shown = await namesIn(fsPath(merged, rel)).catch(() => undefined);
      hash.update(`listing\0${shown === undefined ? '-' : shown.sort().join('\0')}\0`);
    }
    for (const name of names) {
      if (!(await stampEntry(upper, merged, rel === '' ? name : `${rel}/${name}`, freshSinceNs, hash, budget))) return false;
    }
    return true;
  }
  if (!fresh) return true;
  if (st.isSymbolicLink()) hash.update(await readlink(at, 'buffer'));
  else if (st.isFile()) {
    budget.bytes -= Number(st.size);
    if (budget.bytes < 0) return false;
    hash.update(await readFile(at));
  }
  hash.update('\0');
  return true;
}
