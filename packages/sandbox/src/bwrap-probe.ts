import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { inheritedEnv } from './secret-env.js';

let probe: Promise<string | undefined> | undefined;

/**
 * Why bubblewrap cannot confine commands here, or undefined when it can: a trial holder with the
 * namespaces every sandbox gets (as the real root none is needed for users; otherwise a user
 * namespace in which the holder is root). Asked once per process.
 */
export function bwrapUnavailable(): Promise<string | undefined> {
  probe ??= tryBwrap();
  return probe;
}

async function tryBwrap(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'bubblewrap needs Linux';
  const userns = process.getuid?.() !== 0 ? ['--unshare-user', '--uid', '0', '--gid', '0'] : [];
  const args = [...userns, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-pid', '--unshare-net', '--cap-add', 'ALL', '--', '/bin/sh', '-c', 'mount -t tmpfs none /tmp && test -w /tmp'];
  const child = spawn('bwrap', args, { stdio: ['ignore', 'ignore', 'pipe'], env: inheritedEnv() });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  try {
    const [code] = (await once(child, 'exit')) as [number | null];
    return code === 0 ? undefined : `bubblewrap could not make a sandbox here: ${stderr.trim() || `exit ${code}`}`;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT'
      ? 'bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)'
      : `bubblewrap could not be started: ${(err as Error).message}`;
  }
}
