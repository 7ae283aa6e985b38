import { lstatSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandRootDir } from './command-root.js';
import type { CoveredDirs } from './covered-dirs.js';
import { isWithin } from './repo.js';

/**
 * Credential locations under the user's home that no command may read. Directories are covered
 * by an empty tmpfs, files by /dev/null. Only those that exist are hidden (bubblewrap cannot make
 * a mount point inside a read-only tree).
 */
const HOME_CREDENTIALS = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.netrc',
  '.docker',
  '.kube',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.gitconfig-credentials',
  '.vault-token',
  '.password-store',
  '.azure',
  '.terraform.d',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.config/gh',
  '.config/gcloud',
  '.config/hub',
  '.config/infinity-code',
  '.config/anthropic',
  '.config/claude',
  '.claude.json',
  '.local/share/keyrings',
];

/** Machine-wide files that hold password hashes or keys readable by root without capabilities. */
const SYSTEM_CREDENTIALS = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/ssh'];

export interface HiddenPath {
  path: string;
  dir: boolean;
}

/**
 * The credential paths (built-in ones plus `extra`) that exist here, each once, outermost first.
 * Synchronous lstat calls (some thirty, microseconds each): a session opens once these are known,
 * and awaiting each in turn waited on an event loop kept busy at start-up (the first model reply,
 * tool schemas) every time: 100-140 ms before the containment was known.
 */
export function hiddenPaths(extra: readonly string[] = [], home = os.homedir()): Promise<HiddenPath[]> {
  const candidates = [...HOME_CREDENTIALS.map((p) => path.join(home, p)), ...SYSTEM_CREDENTIALS, ...extra.map((p) => path.resolve(p))];
  const found: HiddenPath[] = [];
  for (const p of [...new Set(candidates)].sort()) {
    if (found.some((f) => f.dir && isWithin(f.path, p))) continue;
    const st = quietly(() => lstatSync(p, { throwIfNoEntry: false }));
    if (!st) continue;
    // A symlink is hidden where it points: bubblewrap resolves mount destinations.
    found.push({ path: p, dir: st.isDirectory() || (st.isSymbolicLink() && isDirTarget(p)) });
  }
  return Promise.resolve(found);
}

function isDirTarget(p: string): boolean {
  return quietly(() => statSync(p, { throwIfNoEntry: false }))?.isDirectory() ?? false;
}

/** `f()`, or undefined where it throws (a path we may not look into counts as absent). */
export function quietly<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** What the holder's namespace shows: the view every command of one sandbox shares. */
export interface ViewSpec {
  /** Unprivileged: a user namespace in which the holder is root (it mounts the overlays). */
  userns: boolean;
  /** The state directory: hidden whole (other sessions, other repositories), then parts re-exposed. */
  stateDir: string;
  /** Credential locations to cover. */
  hidden: readonly HiddenPath[];
  /** The home and the socket directories, covered, and what of them is shown again (covered-dirs.ts). */
  covered?: CoveredDirs;
  /** Re-exposed read-only after /tmp and the state dir are covered (the repository, session objects). */
  readOnly: readonly string[];
  /** This program's own files to keep visible (see SessionContainment.programPaths), read-only. */
  programPaths?: readonly string[];
  /** Writable paths from the user's config. */
  extraWritable: readonly string[];
  /** The sandbox's own storage (what the holder mounts from, a copy's tree), writable. */
  writable: readonly string[];
  /** Session storage put back read-only after the state dir is covered (the session's git dir). */
  storageReadOnly?: readonly string[];
  /** False: the holder (and every command joining it) gets a network namespace with only loopback. */
  network: boolean;
  /** Size of /tmp and of /dev/shm each, in bytes (see scratchBytes in command-limits.ts). */
  scratchBytes: number;
  /** Set when commands run as this user rather than as the namespace's root (see command-user.ts). */
  commandUid?: number;
}

/**
 * bubblewrap arguments that build the holder's view, in order: the whole machine read-only, a
 * minimal /dev, the holder's own /proc, a private /tmp, the home and socket directories covered
 * (toolchains shown again), the user's writable paths, the repository read-only, the state dir
 * covered, the sandbox's own storage put back, then the credentials covered. Later mounts win, so the order is the policy.
 */
export function holderBwrapArgs(spec: ViewSpec): string[] {
  // A command user writes /tmp and /dev/shm as anyone writes them (root makes them 0755).
  const scratch = [...(spec.commandUid === undefined ? [] : ['--perms', '1777']), '--size', String(spec.scratchBytes), '--tmpfs'];
  const args = [
    ...(spec.userns ? ['--unshare-user', '--uid', '0', '--gid', '0'] : []),
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    ...scratch, '/dev/shm',
    '--proc', '/proc',
    ...scratch, '/tmp',
  ];
  // Before everything else is mounted again inside them (the repository, the state dir, this
  // program, the user's writable paths): empty, read-only once all of that is in place (below).
  for (const d of spec.covered?.dirs ?? []) args.push('--tmpfs', d);
  for (const p of spec.covered?.keep ?? []) args.push('--ro-bind', p, p);
  for (const p of spec.programPaths ?? []) args.push('--ro-bind', p, p);
  // The user's writable paths first, so that what follows wins inside them: a writable home
  // holding the repository or the state dir must not make either writable (or visible) as a whole.
  for (const p of spec.extraWritable) args.push('--bind', p, p);
  for (const p of spec.readOnly) args.push('--ro-bind', p, p);
  // Where the holder builds the commands' root (command-root.ts), before the state dir is read-only.
  args.push('--tmpfs', spec.stateDir, '--dir', commandRootDir(spec.stateDir));
  for (const p of spec.writable) args.push('--bind', p, p);
  for (const p of spec.storageReadOnly ?? []) args.push('--ro-bind', p, p);
  // Last, so that a writable path holding a credential location (a home made writable) still hides it.
  for (const h of spec.hidden) args.push(...(h.dir ? ['--tmpfs', h.path] : ['--ro-bind', '/dev/null', h.path]));
  if (spec.commandUid !== undefined) for (const d of madeParents(spec)) args.push('--chmod', '0755', d);
  // Read-only once all that is inside them is mounted: commands could fill a tmpfs left
  // writable (outside the /tmp and /dev/shm sizes) and keep it across commands.
  // Not one a writable path of the user's covers whole (a writable home): the top mount there is
  // that path's, and it stays writable.
  for (const d of spec.covered?.dirs ?? []) if (!spec.extraWritable.some((w) => isWithin(w, d))) args.push('--remount-ro', d);
  args.push('--remount-ro', spec.stateDir);
  for (const h of spec.hidden) if (h.dir) args.push('--remount-ro', h.path);
  args.push('--unshare-pid', '--unshare-ipc', ...(spec.network ? [] : ['--unshare-net']));
  // The holder mounts; commands drop every capability again before they run.
  args.push('--cap-add', 'ALL', '--die-with-parent');
  return args;
}

/**
 * Directories bubblewrap makes (mode 0700, root's) inside an empty tmpfs on the way to a mount
 * point: a command user (see command-user.ts) could not pass them, nor could our git, run as that
 * user, whose access() checks ignore its capabilities. Each mount point's parents up to the
 * innermost covering tmpfs, unless a bind (a real directory) holds them.
 */
export function madeParents(spec: ViewSpec): string[] {
  const covers = ['/tmp', '/dev/shm', ...(spec.covered?.dirs ?? []), spec.stateDir, ...spec.hidden.filter((h) => h.dir).map((h) => h.path)];
  const binds = [
    ...(spec.covered?.keep ?? []),
    ...(spec.programPaths ?? []),
    ...spec.extraWritable,
    ...spec.readOnly,
    ...spec.writable,
    ...(spec.storageReadOnly ?? []),
  ];
  const holders = [...covers.map((p) => ({ p, tmpfs: true })), ...binds.map((p) => ({ p, tmpfs: false }))];
  const made = new Set<string>();
  for (const point of [...covers, ...binds]) {
    // The innermost; of a tmpfs and a bind at one path, the bind (mounted later, it is on top).
    const around = holders
      .filter((h) => h.p !== point && isWithin(h.p, point))
      .sort((a, b) => b.p.length - a.p.length || Number(a.tmpfs) - Number(b.tmpfs))[0];
    if (!around?.tmpfs) continue;
    for (let d = path.dirname(point); d !== around.p && isWithin(around.p, d); d = path.dirname(d)) made.add(d);
  }
  return [...made].sort();
}
