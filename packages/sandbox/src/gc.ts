import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { collectPooledBases } from './base-pool.js';
import { foldersDir, type FolderMeta } from './folder-repo.js';
import { removeTree } from './fs-util.js';
import { runProcess } from './run-process.js';
import { inheritedEnv } from './secret-env.js';
import { isAlive, killQuietly, mountsUnder, processesUsing, processStart } from './proc.js';
import { dropRegistry } from './registry.js';
import { inspectSession, withClaim, writeRecord, type SessionState } from './session-record.js';
import { defaultStateDir, sessionsDir } from './state-dir.js';

export interface GcOptions {
  /** Storage root; the default state dir when omitted. */
  stateDir?: string;
  /** Also remove resumable sessions, whatever their age, and every pooled base: everything no live process owns. */
  all?: boolean;
  /** Resumable sessions left more than this many days ago are removed (default 7). */
  keepDays?: number;
  /**
   * Resumable sessions of this repository (its root path) are kept whatever their age:
   * openSession passes its own, so starting work never deletes a session the user may resume.
   */
  keepRepo?: string;
}

export interface GcReport {
  /** Session directories removed: not resumable, left too long ago, or `all` was asked. */
  removedSessions: string[];
  /** Session directories left alone because their owner still runs (or is resuming them). */
  liveSessions: string[];
  /** Resumable sessions whose owner is gone, kept for a later resume. */
  keptSessions: string[];
  /** Leftover processes (namespace holders, escaped commands) that were killed. */
  killedProcesses: number[];
  /** Host mount points that were lazily unmounted. */
  unmounted: string[];
  /** Pooled bases (see base-pool.ts) removed: their repository is gone, or they sat unused too long. */
  removedBases: string[];
  /** Private git dirs of folders without a repository (see folder-repo.ts) removed: their folder is gone. */
  removedFolders: string[];
}

export const DEFAULT_KEEP_DAYS = 7;
const DAY_MS = 24 * 60 * 60_000;
// A session directory without its record is either being created right now or a crash in the
// first instant of one; only the latter is old.
const UNRECORDED_GRACE_MS = 60_000;
const TMP_GRACE_MS = 10 * 60_000;

/**
 * Cleans up after sessions whose owner is gone. Sessions that cannot be resumed are removed with
 * whatever they left (processes, mounts, storage); resumable ones are kept for `keepDays` after
 * they were left, with any processes a crash left running stopped. Namespace mounts die with
 * their processes, so killing those is what frees them.
 */
export async function gc(opts: GcOptions = {}): Promise<GcReport> {
  const stateDir = path.resolve(opts.stateDir ?? defaultStateDir());
  const report: GcReport = { removedSessions: [], liveSessions: [], keptSessions: [], killedProcesses: [], unmounted: [], removedBases: [], removedFolders: [] };
  const root = sessionsDir(stateDir);
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const dir = path.join(root, name);
    const state = await inspectSession(dir).catch(() => undefined);
    if (!state) continue; // Vanished meanwhile (closed or collected by another process).
    const verdict = decide(state, opts);
    if (verdict === 'live' || verdict === 'wait') {
      report.liveSessions.push(dir);
      continue;
    }
    if (verdict === 'keep' && state.kind === 'resumable' && !state.record.owner) {
      report.keptSessions.push(dir);
      continue;
    }
    // Acted on under the session's claim, after a second look: a resume may have just taken it.
    const claimed = await withClaim(dir, async () => {
      const now = await inspectSession(dir);
      const again = decide(now, opts);
      if (again === 'collect') {
        await cleanSession(dir, report);
        return 'removed' as const;
      }
      if (again === 'keep' && now.kind === 'resumable' && now.record.owner) {
        // Crashed: stop what it left running once, and mark it let go as of its last sign of life.
        await stopLeftovers(dir, report);
        await writeRecord(dir, { ...now.record, owner: null, leftAt: new Date(now.leftAt).toISOString() });
      }
      return again === 'keep' ? ('kept' as const) : ('live' as const);
    }).catch(() => undefined);
    if (!claimed) continue;
    const outcome = claimed.ok ? claimed.value : 'live';
    if (outcome === 'removed') report.removedSessions.push(dir);
    else if (outcome === 'kept') report.keptSessions.push(dir);
    else report.liveSessions.push(dir);
  }
  await cleanOldScratch(path.join(stateDir, 'tmp'));
  report.removedBases = await collectPooledBases(stateDir, { keepDays: opts.keepDays ?? DEFAULT_KEEP_DAYS, ...(opts.all ? { all: true } : {}) });
  report.removedFolders = await collectFolders(stateDir);
  return report;
}

/**
 * Removes the private directories of folders that no longer exist (their git dir, the
 * once-notice's mark). A folder still there keeps its own, whatever its age: a few small files,
 * and removing it would tell the user again what they were told.
 */
async function collectFolders(stateDir: string): Promise<string[]> {
  const removed: string[] = [];
  const root = foldersDir(stateDir);
  for (const key of await readdir(root).catch(() => [] as string[])) {
    const dir = path.join(root, key);
    const meta = await readFile(path.join(dir, 'folder.json'), 'utf8').then(
      (t) => JSON.parse(t) as FolderMeta | null,
      () => null,
    ).catch(() => null);
    // Without its record it is being made right now (the record is written first) or is not ours.
    if (meta?.version !== 1 || typeof meta.root !== 'string') continue;
    if ((await stat(meta.root).catch(() => undefined))?.isDirectory()) continue;
    await removeTree(dir);
    removed.push(dir);
  }
  return removed;
}

function decide(state: SessionState, opts: GcOptions): 'live' | 'wait' | 'keep' | 'collect' {
  if (state.kind === 'live') return 'live';
  if (state.kind === 'broken') return !state.record && state.ageMs <= UNRECORDED_GRACE_MS && !opts.all ? 'wait' : 'collect';
  if (opts.all) return 'collect';
  if (opts.keepRepo !== undefined && state.record.repo === opts.keepRepo) return 'keep';
  const keepMs = (opts.keepDays ?? DEFAULT_KEEP_DAYS) * DAY_MS;
  return Date.now() - state.leftAt > keepMs ? 'collect' : 'keep';
}

/**
 * Kills processes still running in or holding mounts of a session whose owner is gone (commands
 * in copy sandboxes without pid namespaces have none to die with), then lazily unmounts what is
 * left on the host.
 */
export async function stopLeftovers(dir: string, report?: Pick<GcReport, 'killedProcesses' | 'unmounted'>): Promise<void> {
  const pids = await processesUsing(dir);
  const identities = await Promise.all(pids.map(async (pid) => ({ pid, start: (await processStart(pid)) ?? '' })));
  for (const { pid } of identities) killQuietly(pid);
  report?.killedProcesses.push(...pids);
  await waitGone(identities);
  const mounts = (await mountsUnder(dir)).sort((a, b) => b.length - a.length);
  for (const m of mounts) {
    const r = await runProcess('umount', ['-l', m], { env: inheritedEnv() });
    if (r.exitCode === 0) report?.unmounted.push(m);
  }
}

async function cleanSession(dir: string, report: GcReport): Promise<void> {
  await stopLeftovers(dir, report);
  // Unresumable first: a crash halfway through the delete must not leave a session that looks whole.
  await dropRegistry(dir);
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
