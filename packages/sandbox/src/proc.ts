import { readFileSync } from 'node:fs';
import { readFile, readdir, readlink } from 'node:fs/promises';

/**
 * A process identity that survives pid reuse: the pid plus its start time (clock ticks since
 * boot, from /proc). Where /proc is missing (macOS) the start time is empty and only the pid is
 * compared.
 */
export interface ProcessIdentity {
  pid: number;
  start: string;
}

export function processStart(pid: number): Promise<string | undefined> {
  return Promise.resolve(processStartNow(pid));
}

function processStartNow(pid: number): string | undefined {
  try {
    // /proc is in memory: read at once (see writeJsonAtomic in registry.ts for why that matters).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses; fields resume after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19];
  } catch {
    return undefined;
  }
}

export async function identify(pid: number): Promise<ProcessIdentity> {
  return { pid, start: (await processStart(pid)) ?? '' };
}

export async function isAlive(id: ProcessIdentity): Promise<boolean> {
  try {
    process.kill(id.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (id.start === '') return true;
  const start = await processStart(id.pid);
  if (start === undefined) return process.platform !== 'linux';
  return start === id.start;
}

export function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone, or not ours: nothing to clean up.
  }
}

/**
 * Pids (Linux) whose command line or working directory mentions `prefix`, or whose mount table
 * does: a command still running in a dead session's namespace is found by its mounts.
 */
export async function processesUsing(prefix: string): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const found: number[] = [];
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (e) => {
        const pid = Number(e);
        if (pid === process.pid) return;
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => '');
        if (cmdline.split('\0').some((a) => a.includes(prefix)) || cwd.startsWith(prefix)) {
          found.push(pid);
          return;
        }
        const mounts = await readFile(`/proc/${pid}/mountinfo`, 'utf8').catch(() => '');
        if (mounts.includes(prefix)) found.push(pid);
      }),
  );
  return found;
}

/**
 * SIGKILLs every process (of ours: others' environments are unreadable) whose environment holds
 * `entry` ("NAME=value"), round after round until a scan finds none, so children forked while a
 * round ran are caught by the next. A killed process's environment reads empty once it exits.
 * Does nothing where /proc is missing.
 */
export async function killProcessesWithEnv(entry: string, maxRounds = 50): Promise<void> {
  const needle = Buffer.from(`\0${entry}\0`);
  for (let round = 0; round < maxRounds; round++) {
    const entries = await readdir('/proc').catch(() => [] as string[]);
    const found: number[] = [];
    await Promise.all(
      entries
        .filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid)
        .map(async (e) => {
          const environ = await readFile(`/proc/${e}/environ`).catch(() => undefined);
          if (environ && Buffer.concat([Buffer.from([0]), environ]).includes(needle)) found.push(Number(e));
        }),
    );
    if (found.length === 0) return;
    for (const pid of found) killQuietly(pid);
  }
}

/** Mount points (from this process's mount table) at or below `prefix`. */
export async function mountsUnder(prefix: string, mountinfo = '/proc/self/mountinfo'): Promise<string[]> {
  const text = await readFile(mountinfo, 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((m): m is string => m !== undefined)
    .map((m) => m.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((m) => m === prefix || m.startsWith(`${prefix}/`));
}
