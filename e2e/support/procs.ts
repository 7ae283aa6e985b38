// Finding the processes a CLI run left behind (Linux /proc), and measuring its memory.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/**
 * A variable to put in the CLI's environment. Everything the run starts inherits it (the
 * sandbox passes the environment on, minus secrets), daemons that setsid away included, so
 * `survivors(mark)` finds them wherever they were reparented.
 */
export function runMark(): { name: string; value: string; env: Record<string, string> } {
  const value = randomBytes(8).toString('hex');
  return { name: 'IC_E2E_RUN', value, env: { IC_E2E_RUN: value } };
}

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
  cmdline: string;
}

export function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; the fields resume after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return { pid, state: f[0], ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]), cmdline };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** Live processes (zombies excluded) whose environment holds the mark. */
export function survivors(mark: { name: string; value: string }): ProcInfo[] {
  const needle = `${mark.name}=${mark.value}`;
  const out: ProcInfo[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue;
    }
    if (!environ.split('\0').includes(needle)) continue;
    const info = procInfo(pid);
    if (info && info.state !== 'Z') out.push(info);
  }
  return out;
}

/** Live processes whose command line contains `text`. */
export function processesMatching(text: string): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    const info = procInfo(Number(e));
    if (info && info.state !== 'Z' && info.cmdline.includes(text)) out.push(info);
  }
  return out;
}

/** Kills what a failed test left running, so one failure doesn't leak into the next tests. */
export function killAll(procs: readonly ProcInfo[]): void {
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

export const TIME_BIN = '/usr/bin/time';
export const haveGnuTime = (): boolean => existsSync(TIME_BIN);

/** "Maximum resident set size (kbytes): N" from a GNU `time -v -o file` report, in MB. */
export function maxRssMb(timeReport: string): number {
  const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(timeReport)?.[1];
  if (kb === undefined) throw new Error(`no maximum RSS in the time report:\n${timeReport}`);
  return Number(kb) / 1024;
}

/** VmHWM (peak RSS) of a live process, in MB. */
export function vmHwmMb(pid: number): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/**
 * Waits (polling /proc, up to `timeoutMs`) until no live process matches; returns those still
 * alive then. A SIGKILLed process takes a moment to die and be reaped: this waits for that event,
 * it is not a fixed sleep.
 */
export async function untilGone(find: () => ProcInfo[], timeoutMs = 5_000): Promise<ProcInfo[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = find();
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await new Promise((r) => setTimeout(r, 25));
  }
}
