import { execa } from 'execa';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const USER = 'icsbx-test';
const PKG_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface UnprivilegedRun {
  /** Why it could not run at all (then nothing else is meaningful). */
  skipped?: string;
  output: string;
  exitCode: number;
}

async function ensureUser(): Promise<{ home: string } | { error: string }> {
  let entry = await execa('getent', ['passwd', USER], { reject: false });
  if (entry.exitCode !== 0) {
    const add = await execa('useradd', ['--create-home', '--shell', '/bin/sh', USER], { reject: false });
    // A concurrent run may have created it between our check and useradd (exit 9: exists).
    if (add.exitCode !== 0 && add.exitCode !== 9) return { error: `useradd ${USER} failed: ${add.stderr}` };
    entry = await execa('getent', ['passwd', USER], { reject: false });
  }
  const home = String(entry.stdout).split(':')[5];
  if (!home) return { error: `no home directory for ${USER}` };
  return { home };
}

/**
 * Runs one of this package's test files in a child vitest as an unprivileged user (created on
 * first use). Needs root; the checkout must be readable by other users.
 */
export async function runSuiteAsUnprivilegedUser(testFile: string): Promise<UnprivilegedRun> {
  const user = await ensureUser();
  if ('error' in user) return { skipped: user.error, output: '', exitCode: -1 };
  const readable = await execa('runuser', ['-u', USER, '--', 'test', '-r', path.join(PKG_DIR, testFile)], { reject: false });
  if (readable.exitCode !== 0) {
    return { skipped: `${USER} cannot read the checkout at ${PKG_DIR} (make it world-readable)`, output: '', exitCode: -1 };
  }
  const vitest = path.join(path.dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
  const env = [
    `HOME=${user.home}`,
    `PATH=${process.env.PATH ?? '/usr/bin:/bin'}`,
    'TMPDIR=/tmp',
    'NO_COLOR=1',
    'IC_SANDBOX_INNER_RUN=1',
  ];
  const run = await execa(
    'runuser',
    ['-u', USER, '--', 'env', '-i', ...env, process.execPath, vitest, 'run', '--configLoader', 'runner', testFile],
    { cwd: PKG_DIR, reject: false, all: true },
  );
  return { output: String(run.all ?? ''), exitCode: run.exitCode ?? -1 };
}
