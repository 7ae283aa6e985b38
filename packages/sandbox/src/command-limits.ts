import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandLimits } from './containment.js';

export type ResolvedLimits = Required<CommandLimits>;

const GIB = 1024 ** 3;

/**
 * Defaults that stop a fork bomb, a runaway allocation or a file filling the disk without getting
 * in the way of builds and test runners (which run dozens of processes with many threads each).
 * The disk limit leaves room for a dependency install and a build's output in every sandbox.
 */
export function resolveLimits(opts: CommandLimits = {}, totalMemory = os.totalmem()): ResolvedLimits {
  return {
    processes: opts.processes ?? 1024,
    memoryBytes: opts.memoryBytes ?? Math.min(8 * GIB, Math.max(GIB, Math.floor(totalMemory / 2))),
    fileSizeBytes: opts.fileSizeBytes ?? 4 * GIB,
    diskBytes: opts.diskBytes ?? 10 * GIB,
  };
}

/**
 * Size of each of a sandbox's two memory-backed filesystems, /tmp and /dev/shm: a quarter of the
 * memory limit. They live as long as the sandbox, and what a command leaves in them outlives its
 * cgroup (the pages stay charged to a cgroup that is gone), so this cap is what bounds them: a
 * sandbox keeps at most half its memory limit there between commands. While a command runs, what
 * it writes there also counts toward its own memory limit.
 */
export function scratchBytes(l: ResolvedLimits): number {
  // Never 0, which would be no limit at all to tmpfs.
  return Math.max(1024 * 1024, Math.floor(l.memoryBytes / 4));
}

/**
 * prlimit prefix for one command. RLIMIT_NPROC counts per user and user namespace, so it bounds
 * the command where it runs unprivileged; the real root is exempt from it, which is why a cgroup
 * (below) is preferred where one can be made. RLIMIT_DATA bounds each process's heap; RLIMIT_FSIZE
 * bounds any file it writes.
 */
export function prlimitArgs(l: ResolvedLimits): string[] {
  return ['prlimit', `--nproc=${l.processes}`, `--data=${l.memoryBytes}`, `--fsize=${l.fileSizeBytes}`, '--'];
}

/** A cgroup made for one command; its processes are counted and bounded together. */
export interface CommandCgroup {
  /** `cgroup.procs` files the command's first process writes its pid to. */
  procs: string[];
  /** Removes the cgroup once the command's processes are gone. */
  remove(): Promise<void>;
}

interface CgroupPlaces {
  /** Parent directories in which a child cgroup with each controller can be made. */
  pids?: string;
  memory?: string;
  v2: boolean;
}

let placesProbe: Promise<CgroupPlaces> | undefined;

/** Where this process may make child cgroups (root with cgroup v1, or a delegated v2 subtree); asked once. */
function cgroupPlaces(): Promise<CgroupPlaces> {
  placesProbe ??= Promise.resolve().then(findPlaces).catch(() => ({ v2: false }));
  return placesProbe;
}

// Synchronous, as in commandCgroup: cgroupfs and /proc live in memory, and each asynchronous call
// would wait for a thread of the pool, busy at start-up, on the way to a session's first command.
function findPlaces(): CgroupPlaces {
  if (process.platform !== 'linux') return { v2: false };
  const own = readFileSync('/proc/self/cgroup', 'utf8');
  const places: CgroupPlaces = { v2: false };
  for (const line of own.split('\n')) {
    const [, controllers, rel] = line.split(':');
    if (controllers === undefined || rel === undefined) continue;
    for (const c of ['pids', 'memory'] as const) {
      if (controllers.split(',').includes(c) && usable(path.join('/sys/fs/cgroup', c, rel), c, false)) places[c] = path.join('/sys/fs/cgroup', c, rel);
    }
    if (controllers === '' && !places.pids) {
      const dir = path.join('/sys/fs/cgroup', rel);
      let enabled = '';
      try {
        enabled = readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8');
      } catch {
        // No delegated subtree here.
      }
      for (const c of ['pids', 'memory'] as const) {
        if (enabled.split(/\s+/).includes(c) && usable(dir, c, true)) {
          places[c] = dir;
          places.v2 = true;
        }
      }
    }
  }
  return places;
}

/** Makes and removes a trial child cgroup: the only reliable test of permission and delegation. */
function usable(parent: string, controller: 'pids' | 'memory', v2: boolean): boolean {
  const trial = path.join(parent, `infinity-code-probe-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(trial);
  } catch {
    return false;
  }
  try {
    writeFileSync(path.join(trial, limitFile(controller, v2)), controller === 'pids' ? '64' : String(GIB));
    return true;
  } catch {
    return false;
  } finally {
    try {
      rmdirSync(trial);
    } catch {
      // Left behind only if the kernel refused; an empty cgroup holds nothing.
    }
  }
}

function limitFile(controller: 'pids' | 'memory', v2: boolean): string {
  if (controller === 'pids') return 'pids.max';
  return v2 ? 'memory.max' : 'memory.limit_in_bytes';
}

/**
 * Child cgroups bounding one command's process count and memory, or undefined where none can be
 * made (then the rlimits alone apply). Each is removed after the command; gc removes any a crash left.
 */
export async function commandCgroup(limits: ResolvedLimits): Promise<CommandCgroup | undefined> {
  const places = await cgroupPlaces();
  const name = `infinity-code-${process.pid}-${randomBytes(4).toString('hex')}`;
  const made: string[] = [];
  try {
    // cgroupfs lives in memory: synchronous calls return at once, where each asynchronous one
    // would wait for a thread of the pool (busy loading modules at start-up) on every command.
    for (const c of ['pids', 'memory'] as const) {
      const parent = places[c];
      if (!parent) continue;
      const dir = path.join(parent, name);
      if (!made.includes(dir)) {
        mkdirSync(dir);
        made.push(dir);
      }
      writeFileSync(path.join(dir, limitFile(c, places.v2)), String(c === 'pids' ? limits.processes : limits.memoryBytes));
    }
  } catch {
    await removeDirs(made);
    return undefined;
  }
  if (made.length === 0) return undefined;
  return { procs: made.map((d) => path.join(d, 'cgroup.procs')), remove: () => removeDirs(made) };
}

async function removeDirs(dirs: readonly string[]): Promise<void> {
  for (const d of dirs) {
    // A cgroup is removable once its last process is reaped, which can trail the command's end.
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        rmdirSync(d);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EBUSY') break;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  }
}

/**
 * argv prefix that moves the command into its cgroups before anything of it runs, so nothing it
 * forks is ever outside them.
 */
export function joinCgroupArgs(cg: CommandCgroup | undefined): string[] {
  if (!cg) return [];
  return ['/bin/sh', '-c', 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"', 'join-cgroup', ...cg.procs, '--'];
}
