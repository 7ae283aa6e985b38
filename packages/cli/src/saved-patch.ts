import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Saves a session's changes as a patch under `.infinity/patches/<session>.patch` (git-ignored
 * with the rest of `.infinity`), for `git apply --3way`. Returns its path relative to `cwd`.
 */
export function savePatch(root: string, sessionId: string, patchBytes: Buffer, cwd: string): string {
  const dir = join(root, '.infinity', 'patches');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${sessionId}.patch`);
  writeFileSync(file, patchBytes);
  return relative(cwd, file) || file;
}
