import os from 'node:os';
import path from 'node:path';

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
