import { randomBytes } from 'node:crypto';
import path from 'node:path';

// Sandbox writes go to a sibling temporary file that is then renamed over the target, so a
// process killed mid-write leaves the old content or the new, never a truncated file (a tool
// call cut short by a crash may be retried, and "already exists" must then mean whole). A
// temporary file orphaned by such a kill is never part of a sandbox's changes.
const SUFFIX = '.ic-partial';

/** A fresh temporary path beside `host`. */
export function partialWritePath(host: string): string {
  return path.join(path.dirname(host), `.${path.basename(host)}.${randomBytes(4).toString('hex')}${SUFFIX}`);
}

/** True for a temporary file of an interrupted write (repo-relative or host path). */
export function isPartialWrite(p: string): boolean {
  return p.endsWith(SUFFIX) && path.basename(p).startsWith('.');
}

/** The same as a git pathspec that excludes them, for `git add`. */
export const EXCLUDE_PARTIAL_WRITES = `:(exclude,glob)**/.*${SUFFIX}`;
