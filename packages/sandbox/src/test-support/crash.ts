import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BackendName } from '../index.js';
import type { RestackPoint } from './restack.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * Runs crash-child.ts in its own node process, waits until it reports READY, then SIGKILLs it
 * and waits for it to be gone. Returns the id of the session it held.
 */
export async function runAndKill(
  repo: string,
  stateDir: string,
  backend: BackendName,
  mode: 'busy' | 'stack' | 'refresh' | 'refresh-interrupted' | `restack:${RestackPoint}`,
  expectFile = '',
): Promise<string> {
  const child = execa(process.execPath, ['--import', 'tsx', path.join(HERE, 'crash-child.ts'), repo, stateDir, backend, mode, expectFile], {
    cwd: path.resolve(HERE, '../../../..'),
    reject: false,
    buffer: false,
    stderr: 'pipe',
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  while (!/READY \S+\n/.test(out)) {
    const chunk: unknown = await new Promise((resolve, reject) => {
      child.stdout.once('data', resolve);
      child.once('exit', () => reject(new Error(`crash child exited early: ${out}${err}`)));
    });
    out += String(chunk);
  }
  child.kill('SIGKILL');
  await child;
  return /READY (\S+)\n/.exec(out)![1];
}
