import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { SandboxError } from './errors.js';
import { isWithin } from './repo.js';

// Where sandboxes live by default (defined with the folders' private git dirs, which the CLI
// finds before it loads this package).
export { defaultStateDir } from './folder-repo.js';

export function sessionsDir(stateDir: string): string {
  return path.join(stateDir, 'sessions');
}

/**
 * Refuses a state directory that overlaps the repository (inside it, or holding it), then makes
 * its sessions directory.
 */
export function requireStateDirOutside(repoRoot: string, stateDir: string): void {
  if (isWithin(repoRoot, stateDir) || isWithin(stateDir, repoRoot)) {
    throw new SandboxError(
      'bad-state-dir',
      `The sandbox state directory ${stateDir} overlaps the repository ${repoRoot}. ` +
        'Sandboxes must be stored outside the repository: set XDG_STATE_HOME or pass another stateDir.',
    );
  }
  mkdirSync(sessionsDir(stateDir), { recursive: true });
}
