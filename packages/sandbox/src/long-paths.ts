// How long and how deep a path a change may have and still be carried from a sandbox to where
// it is applied. Linux refuses a path of PATH_MAX (4096) bytes or more in one call, and this
// process reaches a sandbox's files by their absolute paths (a layer directory or the view root,
// then the repository-relative path): a longer path cannot even be looked at, and git skips it
// with a warning. A command can still make one (`mkdir -p` and `cd` go a step at a time). Depth
// costs on its own: every walk of a path (ours, git's) looks up each directory on the way, so a
// thousand files a thousand levels down cost a billion lookups. Within both limits every path
// fits, with room for where the sandbox is stored, at a bounded cost; beyond them a change is
// left out and reported, with everything under the directory where a limit is crossed.
import { hasOddBytes, nameBytes } from './utf8-names.js';

/** Bytes a repository-relative path may have to be carried (see above). */
export const MAX_PATH_BYTES = 3072;
/** Names a repository-relative path may have (its directories and its own), see above. */
export const MAX_PATH_DEPTH = 256;

/** The bytes of a repository-relative path (names that are not UTF-8 are escaped, see utf8-names.ts). */
export function pathBytes(p: string): number {
  return hasOddBytes(p) ? nameBytes(p).length : Buffer.byteLength(p);
}

export function isTooLong(p: string): boolean {
  return tooLongPrefix(p) !== undefined;
}

/**
 * What to report for a path over a limit: the path up to the name that crosses it, with a
 * trailing `/` when that is a directory above the path (its whole content is left out: one entry
 * however many files, and the same whichever of them was met first). Undefined within the limits.
 */
export function tooLongPrefix(p: string): string | undefined {
  // A UTF-8 character is at most 4 bytes (an escaped byte stands for 1), and each name but the
  // last takes 2 characters at least: most paths are known to fit without a look at them.
  if (p.length * 4 <= MAX_PATH_BYTES && p.length < 2 * MAX_PATH_DEPTH) return undefined;
  let bytes = -1;
  let names = 0;
  for (let start = 0; start < p.length; ) {
    const slash = p.indexOf('/', start);
    const end = slash < 0 ? p.length : slash;
    bytes += 1 + pathBytes(p.slice(start, end));
    names++;
    if (bytes > MAX_PATH_BYTES || names > MAX_PATH_DEPTH) return slash < 0 || slash === p.length - 1 ? p : p.slice(0, slash + 1);
    if (slash < 0) break;
    start = slash + 1;
  }
  return undefined;
}

// `git add` (LC_ALL=C, see git.ts) on a path the kernel refuses as too long, a warning and no
// failure: "warning: could not open directory 'x/x/…/': File name too long" for a directory,
// "warning: unable to access 'x/x/…': File name too long" for an entry. git cuts its messages at
// 4 KB, so the path and the error after it may be cut off; the first MAX_PATH_BYTES bytes of the
// path, all that is reported, are always there (and no name is long enough to reach the cut).
const GIT_WARNING = /^warning: (?:could not open directory|unable to access) '(.*)$/;
const TOO_LONG = "': File name too long";
const GIT_MESSAGE_CUT = 4000;

/** The paths to report (tooLongPrefix) for what `git add` skipped as too long, from its stderr. */
export function tooLongInGitWarnings(stderr: string): string[] {
  const found = new Set<string>();
  for (const line of stderr.split('\n')) {
    const quoted = GIT_WARNING.exec(line)?.[1];
    if (quoted === undefined) continue;
    let shown: string;
    if (quoted.endsWith(TOO_LONG)) shown = quoted.slice(0, -TOO_LONG.length);
    else if (line.length >= GIT_MESSAGE_CUT) shown = quoted;
    else continue; // another failure (a directory it may not read), not ours to report
    const prefix = tooLongPrefix(shown);
    if (prefix !== undefined) found.add(prefix);
  }
  return [...found];
}
