import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SandboxError } from './errors.js';
import { isWithin } from './repo.js';

/**
 * Where sandboxes live by default: the user's state directory, never the repository (overlay
 * refuses storage inside a lower layer, and the user's tree must stay untouched).
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'infinity-code');
}

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
