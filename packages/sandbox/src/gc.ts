import { execa } from 'execa';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { removeTree } from './fs-util.js';
import { isAlive, killQuietly, mountsUnder, processesUsing, processStart } from './proc.js';
import { defaultStateDir, sessionsDir } from './state-dir.js';

export interface GcReport {
  /** Session directories removed because their owner process is gone. */
  removedSessions: string[];
  /** Session directories left alone because their owner still runs. */
  liveSessions: string[];
  /** Leftover processes (namespace holders, escaped commands) that were killed. */
  killedProcesses: number[];
  /** Host mount points that were lazily unmounted. */
  unmounted: string[];
}

// A session directory without its record is either being created right now or a crash in the
// first instant of one; only the latter is old.
const UNRECORDED_GRACE_MS = 60_000;
const TMP_GRACE_MS = 10 * 60_000;

/**
 * Removes what crashed sessions left behind: processes still holding their namespaces or
 * running in their copies, mounts under their storage, and the storage itself. Namespace mounts
 * die with their processes, so killing those is what frees them.
 */
export async function gc(opts: { stateDir?: string } = {}): Promise<GcReport> {
  const stateDir = path.resolve(opts.stateDir ?? defaultStateDir());
  const report: GcReport = { removedSessions: [], liveSessions: [], killedProcesses: [], unmounted: [] };
  const root = sessionsDir(stateDir);
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    const dir = path.join(root, name);
    if (!(await isStale(dir))) {
      report.liveSessions.push(dir);
      continue;
    }
    await cleanSession(dir, report);
    report.removedSessions.push(dir);
  }
  await cleanOldScratch(path.join(stateDir, 'tmp'));
  return report;
}

async function isStale(dir: string): Promise<boolean> {
  try {
    const record = JSON.parse(await readFile(path.join(dir, 'session.json'), 'utf8')) as {
      owner?: { pid: number; start: string };
    };
    if (!record.owner) return true;
    return !(await isAlive(record.owner));
  } catch {
    const st = await stat(dir).catch(() => undefined);
    return st !== undefined && Date.now() - st.mtimeMs > UNRECORDED_GRACE_MS;
  }
}

async function cleanSession(dir: string, report: GcReport): Promise<void> {
  const pids = await processesUsing(dir);
  const identities = await Promise.all(pids.map(async (pid) => ({ pid, start: (await processStart(pid)) ?? '' })));
  for (const { pid } of identities) killQuietly(pid);
  report.killedProcesses.push(...pids);
  await waitGone(identities);
  const mounts = (await mountsUnder(dir)).sort((a, b) => b.length - a.length);
  for (const m of mounts) {
    const r = await execa('umount', ['-l', m], { reject: false });
    if (r.exitCode === 0) report.unmounted.push(m);
  }
  await removeTree(dir);
}

/** SIGKILL is asynchronous; a dying namespace holder still pins its overlay until it is reaped. */
async function waitGone(ids: Array<{ pid: number; start: string }>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let alive = ids;
  while (alive.length > 0 && Date.now() < deadline) {
    const states = await Promise.all(alive.map(async (id) => ((await isAlive(id)) && !(await isZombie(id.pid)) ? id : undefined)));
    alive = states.filter((x): x is { pid: number; start: string } => x !== undefined);
    if (alive.length > 0) await delay(10);
  }
}

async function isZombie(pid: number): Promise<boolean> {
  const s = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return s.slice(s.lastIndexOf(')') + 2).startsWith('Z');
}

async function cleanOldScratch(tmp: string): Promise<void> {
  const names = await readdir(tmp).catch(() => [] as string[]);
  for (const name of names) {
    const p = path.join(tmp, name);
    const st = await stat(p).catch(() => undefined);
    if (st && Date.now() - st.mtimeMs > TMP_GRACE_MS) await removeTree(p);
  }
}
