import { randomBytes } from 'node:crypto';
import { link, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BackendName } from './backend.js';
import type { Snapshot } from './base-snapshot.js';
import { identify, isAlive, type ProcessIdentity } from './proc.js';
import { readJson, readRegistry, writeJsonAtomic } from './registry.js';

/** The base as the latest refresh left it (see SandboxSession.refreshBase); files are session-relative. */
export interface RefreshedBase {
  /** Counts the session's refreshes; names this one's files. */
  number: number;
  snapshot: Snapshot;
  /** Index of `snapshot`. */
  index: string;
  /** Overlay backends: the delta layer from the base to `snapshot`. */
  layer?: string;
}

/** On-disk record of a session: who holds it, what it snapshotted, and whether it can be resumed. */
export interface SessionRecord {
  /** 3 once the base was refreshed: older versions of this package must not resume it without its delta. */
  version: 2 | 3;
  /**
   * The process holding the session. null once it was let go: closed with `keep`, or found
   * abandoned by gc after a crash. A dead owner means a crash nobody has looked at yet.
   */
  owner: ProcessIdentity | null;
  repo: string;
  backend: BackendName;
  /**
   * The snapshot taken at open, which the base directory holds. Set once the base is
   * materialised; a session without it never became usable.
   */
  snapshot?: Snapshot;
  /** The base the sandboxes stand on now, when it was refreshed since open. */
  refreshed?: RefreshedBase;
  /**
   * Set while a refresh moves the sandboxes from `from` onto `refreshed` (after the session
   * switched to it, before every sandbox followed): a resume finishes the move.
   */
  rebasing?: { from: Snapshot };
  /**
   * The shared node_modules dirs, fixed at open: overlay sandboxes keep a private upper per
   * entry by position, so a resumed session must not re-detect them.
   */
  heavyDirs: string[];
  createdAt: string;
  /** When the last owner let go (close with keep) or was last seen alive (gc after a crash). */
  leftAt?: string;
}

export const RECORD_FILE = 'session.json';
const CLAIM_FILE = 'claim.lock';

export async function readRecord(sessionDir: string): Promise<SessionRecord | undefined> {
  const raw = (await readJson(path.join(sessionDir, RECORD_FILE)).catch(() => undefined)) as Partial<SessionRecord> | undefined;
  if (typeof raw !== 'object' || raw === null || (raw.version !== 2 && raw.version !== 3) || typeof raw.repo !== 'string') return undefined;
  return { ...raw, heavyDirs: raw.heavyDirs ?? [] } as SessionRecord;
}

export function writeRecord(sessionDir: string, record: SessionRecord): Promise<void> {
  return writeJsonAtomic(path.join(sessionDir, RECORD_FILE), { ...record, version: record.refreshed ? 3 : 2 });
}

/** Marks the owner as alive: a crashed session's age is counted from its last heartbeat. */
export async function touchRecord(sessionDir: string): Promise<void> {
  const now = new Date();
  await utimes(path.join(sessionDir, RECORD_FILE), now, now).catch(() => undefined);
}

export type SessionState =
  | { kind: 'live'; record: SessionRecord | undefined; owner: ProcessIdentity }
  | { kind: 'resumable'; record: SessionRecord; /** When it was left, ms since the epoch. */ leftAt: number }
  | { kind: 'broken'; why: string; record: SessionRecord | undefined; ageMs: number };

/**
 * What a session directory holds, read without locks (callers that act on the answer re-check it
 * under the session's claim). Resumable means: the owner is gone, the base was completed, the
 * sandbox registry is readable and the repository still exists.
 */
export async function inspectSession(sessionDir: string): Promise<SessionState> {
  const recordFile = path.join(sessionDir, RECORD_FILE);
  const [recordStat, dirStat] = await Promise.all([stat(recordFile).catch(() => undefined), stat(sessionDir).catch(() => undefined)]);
  const raw = (await readJson(recordFile).catch(() => undefined)) as { owner?: ProcessIdentity | null } | undefined;
  const ageMs = Date.now() - (recordStat ?? dirStat)!.mtimeMs;
  // Any version: a live owner (even an older build of ours) is never disturbed.
  if (raw?.owner && (await isAlive(raw.owner))) return { kind: 'live', record: await readRecord(sessionDir), owner: raw.owner };
  const record = await readRecord(sessionDir);
  if (!raw) return { kind: 'broken', why: 'it has no session record (it crashed while being created)', record, ageMs };
  if (!record) return { kind: 'broken', why: 'it was made by an older version that cannot resume sessions', record, ageMs };
  if (!record.snapshot) return { kind: 'broken', why: 'it crashed before its snapshot was complete', record, ageMs };
  if (!(await readRegistry(sessionDir))) return { kind: 'broken', why: 'it was being deleted (its sandbox list is gone)', record, ageMs };
  if (!(await stat(record.repo).catch(() => undefined))?.isDirectory()) {
    return { kind: 'broken', why: `its repository ${record.repo} no longer exists`, record, ageMs };
  }
  const leftAt = record.leftAt !== undefined ? Date.parse(record.leftAt) : recordStat!.mtimeMs;
  return { kind: 'resumable', record, leftAt: Number.isNaN(leftAt) ? recordStat!.mtimeMs : leftAt };
}

export type Claimed<T> = { ok: true; value: T } | { ok: false; holder: ProcessIdentity };

/**
 * Runs `fn` holding the session's claim: the short lock under which ownership changes hands and
 * gc removes or tidies a session, so two processes resuming the same session at once, or a gc
 * racing a resume, cannot both act. The lock file is linked into place complete (never seen
 * empty); one left by a process that died holding it is broken. Two processes breaking the same
 * dead lock at the same instant could both win; that needs a crash inside a millisecond-long
 * critical section plus two simultaneous claimants, which we accept.
 */
export async function withClaim<T>(sessionDir: string, fn: () => Promise<T>): Promise<Claimed<T>> {
  const me = await identify(process.pid);
  const lock = path.join(sessionDir, CLAIM_FILE);
  const tmp = path.join(sessionDir, `.claim.${process.pid}.${randomBytes(4).toString('hex')}`);
  await writeFile(tmp, JSON.stringify(me));
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(tmp, lock);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = JSON.parse(await readFile(lock, 'utf8').catch(() => 'null')) as ProcessIdentity | null;
      if (holder && (await isAlive(holder))) return { ok: false, holder };
      if (attempt > 0) throw new Error(`could not take the claim lock ${lock}`);
      await rm(lock, { force: true });
    }
  } finally {
    await rm(tmp, { force: true });
  }
  try {
    return { ok: true, value: await fn() };
  } finally {
    // fn may have deleted the whole session directory (gc), which released the lock with it.
    await rm(lock, { force: true });
  }
}
