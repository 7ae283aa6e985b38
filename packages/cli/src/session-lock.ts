import { mkdirSync, openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/** The process that holds a session. */
export interface LockHolder {
  pid: number;
  /** The process's start time (Linux: /proc/<pid>/stat), so a reused pid is not taken for it. */
  start?: string;
}

/**
 * Which live process runs each session of a project, as one file per session under
 * `.infinity/locks/`: a session belongs to the process that runs it, and a second process must
 * not run its threads too. A holder that died (crash, kill -9) leaves a file that no longer
 * counts. Held locks are let go when this process exits.
 */
export class SessionLocks {
  private readonly held = new Set<string>();

  constructor(private readonly dir: string) {}

  /** Takes the session's lock; returns who holds it instead when that is another live process. */
  acquire(sessionId: string): LockHolder | undefined {
    if (this.held.has(sessionId)) return undefined;
    mkdirSync(this.dir, { recursive: true });
    const file = this.file(sessionId);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(file, 'wx', 0o600);
        try {
          writeSync(fd, JSON.stringify(self()));
        } finally {
          closeSync(fd);
        }
        if (this.held.size === 0) process.once('exit', () => this.releaseAll());
        this.held.add(sessionId);
        return undefined;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readHolder(file);
      // This process already (another registry of it: a test, or the demo's two runs).
      if (holder?.pid === process.pid) return undefined;
      if (holder && isAlive(holder)) return holder;
      // Left by a process that is gone: no longer anyone's.
      try {
        unlinkSync(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    return readHolder(file) ?? { pid: 0 };
  }

  /** The live process holding the session, if any (this one included). */
  holder(sessionId: string): LockHolder | undefined {
    const holder = readHolder(this.file(sessionId));
    return holder && isAlive(holder) ? holder : undefined;
  }

  releaseAll(): void {
    for (const id of this.held) {
      try {
        unlinkSync(this.file(id));
      } catch {
        // Gone already: nothing to let go.
      }
    }
    this.held.clear();
  }

  private file(sessionId: string): string {
    return join(this.dir, `${sessionId}.lock`);
  }
}

function self(): LockHolder {
  const start = startOf(process.pid);
  return { pid: process.pid, ...(start !== undefined ? { start } : {}) };
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockHolder>;
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, ...(typeof parsed.start === 'string' ? { start: parsed.start } : {}) } : undefined;
  } catch {
    // Torn or unreadable (a crash while it was written): nobody's.
    return undefined;
  }
}

function isAlive(h: LockHolder): boolean {
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    // EPERM: alive, another user's.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = startOf(h.pid);
  return h.start === undefined || start === undefined || start === h.start;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
