import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Saves a session's changes as a patch under `.infinity/patches/<session>.patch` (git-ignored
 * with the rest of `.infinity`), for `git apply` (see applyCommand). Returns its path relative to `cwd`.
 */
export function savePatch(root: string, sessionId: string, patchBytes: Buffer, cwd: string): string {
  const dir = join(root, '.infinity', 'patches');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${sessionId}.patch`);
  writeFileSync(file, patchBytes);
  return relative(cwd, file) || file;
}

/**
 * The command that applies a saved patch, run where the user is: `git apply --3way` in a
 * repository (it merges with the user's edits since); in a folder without one (where the user
 * started is its root) plain `git apply`, as --3way needs a repository.
 */
export function applyCommand(patchFile: string, folder: boolean): string {
  return folder ? `git apply ${patchFile}` : `git apply --3way ${patchFile}`;
}
