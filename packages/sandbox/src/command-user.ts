// Who a command is when this program runs as root. Without capabilities, uid 0 still decides a
// great deal in the kernel (sysctl writes, root-owned sockets and files, the root user's keys, a
// setuid-root file left on the host's disk), so commands never run as the host's root: they run as
// COMMAND_UID, and the repository and the sandbox's storage are idmapped for them (idmap-exec),
// so that what the disk records as root's is theirs to change while the disk keeps root's
// ownership.
import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, realpathSync } from 'node:fs';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { SandboxError } from './errors.js';
import { IDMAP_EXEC_SOURCE } from './idmap-exec-source.js';
import { isWithin } from './repo.js';
import { runProcess } from './run-process.js';
import { inheritedEnv } from './secret-env.js';

/**
 * The uid and gid commands run as under a root-run CLI: no account's, far from the ranges
 * distributions give users, system services and containers' subordinate ids, and below 2^31
 * (tools that keep a uid in a signed int).
 */
export const COMMAND_UID = 1_000_000_000;

/** What a holder needs to run its commands as COMMAND_UID (see ns-holder.ts). */
export interface CommandUser {
  uid: number;
  /** The compiled idmap-exec. */
  helper: string;
  /**
   * idmap-exec's directory arguments: those commands must own the files of (the outermost of
   * them), then, marked `?`, those they only read, which stay as they are where they cannot be
   * idmapped (see idmap-exec-source.ts).
   */
  idmap: readonly string[];
}

/** File name of the helper built from this very source: a changed source is a new build. */
const HELPER_NAME = `idmap-exec-${createHash('sha256').update(IDMAP_EXEC_SOURCE).digest('hex').slice(0, 12)}`;

/** True when this process runs as root: its commands need a command user. */
export function needsCommandUser(): boolean {
  return process.getuid?.() === 0;
}

/** The directories of `dirs` that no other of them contains: an idmapped directory maps all below it. */
export function outermost(dirs: readonly string[]): string[] {
  const unique = [...new Set(dirs.map((d) => path.resolve(d)))].sort();
  return unique.filter((d) => !unique.some((o) => o !== d && isWithin(o, d)));
}

/**
 * The helper's path: the build's (`pnpm build` puts it in this package's dist), else one compiled
 * here into the user's cache with the machine's C compiler. Found once per process.
 */
export function idmapHelper(): Promise<string> {
  return (helperLookup ??= findOrBuildHelper().catch((err: unknown) => {
    helperLookup = undefined;
    throw err;
  }));
}
let helperLookup: Promise<string> | undefined;

async function findOrBuildHelper(): Promise<string> {
  const built = builtHelper();
  if (built && trustworthy(built)) return built;
  const cacheDir = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'infinity-code');
  const cached = path.join(cacheDir, HELPER_NAME);
  if (trustworthy(cached)) return cached;
  await mkdir(cacheDir, { recursive: true, mode: 0o700 });
  await compileHelper(cached);
  return cached;
}

/** Where `pnpm build` puts the helper, when this package is installed with its dist. */
function builtHelper(): string | undefined {
  try {
    return path.join(path.dirname(createRequire(import.meta.url).resolve('@infinity-code/sandbox/package.json')), 'dist', HELPER_NAME);
  } catch {
    return undefined;
  }
}

/**
 * A helper root runs must be root's and writable by root alone, as must its directory: anyone
 * else who could replace it would run code as root. So must be each directory above (as it
 * resolves): whoever may rename an entry there could put a directory of theirs in its place. A
 * sticky one (/tmp) lets no one rename what is not theirs.
 */
export function trustworthy(file: string): boolean {
  const uid = process.getuid?.();
  const safe = (p: string, kind: 'file' | 'dir'): boolean => {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st || st.uid !== uid || (st.mode & 0o022) !== 0) return false;
    return kind === 'file' ? st.isFile() : st.isDirectory();
  };
  if (!safe(file, 'file') || !safe(path.dirname(file), 'dir')) return false;
  let real: string;
  try {
    real = realpathSync(path.dirname(file));
  } catch {
    return false;
  }
  for (let d = path.dirname(real); ; d = path.dirname(d)) {
    const st = lstatSync(d);
    const ownersOnly = (st.mode & 0o022) === 0 || (st.mode & 0o1000) !== 0;
    if ((st.uid !== 0 && st.uid !== uid) || !ownersOnly) return false;
    if (d === path.dirname(d)) return true;
  }
}

/** Compiles the helper to `dest` (atomically: concurrent processes may build it at once). */
export async function compileHelper(dest: string): Promise<void> {
  const tmp = `${dest}.${randomBytes(4).toString('hex')}.tmp`;
  const cc = process.env.CC || 'cc';
  const r = await runProcess(cc, ['-O2', '-o', tmp, '-x', 'c', '-'], { input: IDMAP_EXEC_SOURCE, env: inheritedEnv() });
  if (r.exitCode !== 0) {
    await rm(tmp, { force: true });
    const why = r.error ? `${cc} could not be run (${r.error.message})` : r.stderr.toString().trim().split('\n').slice(-3).join(' ');
    throw new SandboxError(
      'backend-unavailable',
      `Running as root, commands run as an unprivileged user, through a small helper built with the C compiler, and it could not be built: ${why}. ` +
        'Install a C compiler (Debian/Ubuntu: apt install gcc), or run infinity-code as a regular user.',
    );
  }
  await chmod(tmp, 0o755);
  await rename(tmp, dest);
}

/** Whether idmapped mounts work for `dir` here (the helper's own check), with what went wrong if not. */
export async function probeIdmap(dir: string): Promise<string | undefined> {
  let helper: string;
  try {
    helper = await idmapHelper();
  } catch (err) {
    return (err as Error).message;
  }
  const r = await runProcess(helper, [String(COMMAND_UID), '--probe', dir], { env: inheritedEnv() });
  if (r.exitCode === 0) return undefined;
  return `commands cannot be mapped to an unprivileged user here (idmapped mounts: Linux 5.19 or later): ${r.stderr.toString().trim() || `exit ${r.exitCode}`}`;
}

/**
 * The command user for a holder whose commands must own the files under `owned` and read those
 * under `read`, or undefined when this process is not root.
 */
export async function commandUserFor(owned: readonly string[], read: readonly string[] = []): Promise<CommandUser | undefined> {
  if (!needsCommandUser()) return undefined;
  // One idmapped mount per outermost directory; required where it holds one commands must own.
  const idmap = outermost([...owned, ...read]).map((d) => (owned.some((o) => isWithin(d, path.resolve(o))) ? d : `?${d}`));
  return { uid: COMMAND_UID, helper: await idmapHelper(), idmap };
}

/** For the build (scripts/build-helper.mjs): the helper's path in this package's dist. */
export function builtHelperName(): string {
  return HELPER_NAME;
}
