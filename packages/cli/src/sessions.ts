import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
// The light subpath: the TUI's first frame must not wait for SQLite and the rest of the runtime.
import { newThreadId } from '@infinity-code/runtime/ids';
import { EXIT, UserError } from './exit-codes.js';
import { SessionLocks } from './session-lock.js';

export interface SessionInfo {
  /** Also the root thread's id. */
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  /** The sandbox session holding this session's sandboxes, to resume them. */
  sandboxSession?: string;
  /** The project instructions its system prompt holds (see sessionInstructions). */
  instructions?: string;
}

/**
 * The project's sessions (one root thread each), in `.infinity/sessions.json`. Written by
 * replace-on-rename, so a crash never leaves a torn file.
 */
export class SessionRegistry {
  private readonly file: string;
  private readonly locks: SessionLocks;

  constructor(infinityDir: string) {
    this.file = join(infinityDir, 'sessions.json');
    this.locks = new SessionLocks(join(infinityDir, 'locks'));
  }

  /**
   * Makes the session this process's to run (see SessionLocks); a UserError naming the process
   * that runs it already otherwise. Sessions made by create() are claimed already.
   */
  claim(session: SessionInfo): SessionInfo {
    const holder = this.locks.acquire(session.id);
    if (holder) {
      throw new UserError(
        `Session ${session.id.slice(0, 8)} (${session.title}) is in use by another Infinity Code process (pid ${holder.pid}). ` +
          'Wait for it to end (or stop it), or start a new session without -c or -r.',
        EXIT.usage,
      );
    }
    return session;
  }

  /** Lets go of the sessions this process claimed (done at exit anyway). */
  releaseLocks(): void {
    this.locks.releaseAll();
  }

  /** Whether another live process runs the session (the -r list marks those). */
  inUseElsewhere(id: string): boolean {
    const holder = this.locks.holder(id);
    return holder !== undefined && holder.pid !== process.pid;
  }

  list(): SessionInfo[] {
    if (!existsSync(this.file)) return [];
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as SessionInfo[];
      return [...parsed].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
    } catch {
      throw new UserError(`The session list ${this.file} is damaged. Delete it to start afresh (history stays in state.db).`, EXIT.config);
    }
  }

  latest(): SessionInfo | undefined {
    return this.list()[0];
  }

  /** The session with exactly this id, if the project has it. */
  get(id: string): SessionInfo | undefined {
    return this.list().find((s) => s.id === id);
  }

  /** A session by id or unique id prefix. */
  find(idOrPrefix: string): SessionInfo {
    const all = this.list();
    const exact = all.find((s) => s.id === idOrPrefix);
    if (exact) return exact;
    const matches = all.filter((s) => s.id.startsWith(idOrPrefix));
    if (matches.length === 1) return matches[0];
    if (matches.length === 0) {
      const known = all.slice(0, 5).map((s) => `${s.id.slice(0, 8)} (${s.title})`).join(', ');
      throw new UserError(
        `No session ${idOrPrefix} in this project. ` +
          (known ? `Recent sessions: ${known}. Use -c for the latest.` : 'There are no sessions yet: start one without -r.'),
        EXIT.usage,
      );
    }
    throw new UserError(`Session prefix ${idOrPrefix} is ambiguous (${matches.length} sessions); give more of the id.`, EXIT.usage);
  }

  /**
   * `instructions`: the project instructions its system prompt holds, when already known; `id`:
   * the session's, when not a new one.
   */
  create(task: string, instructions?: string, id?: string): SessionInfo {
    const now = new Date().toISOString();
    // `id`: the one the user chose (--session-id); the runtime takes any string as a root thread's.
    const s: SessionInfo = { id: id ?? newThreadId(), title: firstLine(task), createdAt: now, updatedAt: now, ...(instructions !== undefined && { instructions }) };
    // Claimed before it is listed: a -c in another process never sees it unclaimed.
    this.claim(s);
    this.update((all) => [s, ...all]);
    return s;
  }

  /**
   * Names the session after `text` (its first line), as the session list shows it: a TUI session
   * is untitled until its first message. Blank text leaves the title as it is.
   */
  retitle(id: string, text: string): void {
    const title = firstLine(text);
    if (title === '') return;
    this.update((all) => all.map((s) => (s.id === id ? { ...s, title } : s)));
  }

  /** Records which sandbox session holds this session's sandboxes. */
  setSandboxSession(id: string, sandboxSession: string): void {
    this.update((all) => all.map((s) => (s.id === id ? { ...s, sandboxSession } : s)));
  }

  /**
   * Marks the session as the most recently used one, recording which project instructions its
   * system prompt holds (see sessionInstructions) in the same write.
   */
  touch(id: string, instructions?: string): void {
    this.update((all) => {
      const hit = all.find((s) => s.id === id);
      if (!hit) return all;
      const now = { ...hit, updatedAt: new Date().toISOString(), ...(instructions !== undefined && { instructions }) };
      // First in the file too, so equal timestamps still sort it first (the sort is stable).
      return [now, ...all.filter((s) => s !== hit)];
    });
  }

  /**
   * Reads, changes and writes the list under a lock file: two processes in one project (each
   * with its own session) would otherwise lose each other's entries.
   */
  private update(change: (all: SessionInfo[]) => SessionInfo[]): void {
    mkdirSync(dirname(this.file), { recursive: true });
    const lock = `${this.file}.lock`;
    const release = takeLock(lock);
    try {
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(change(this.list()), null, 2)}\n`);
      renameSync(tmp, this.file);
    } finally {
      release();
    }
  }
}

/** A lock older than this was left by a process that died holding it (an update takes milliseconds). */
const STALE_LOCK_MS = 5_000;

/** Takes the lock file, waiting (a few milliseconds at a time) while another process holds it. */
function takeLock(lock: string): () => void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
    } catch {
      // Let go meanwhile: try again.
    }
    Atomics.wait(pause, 0, 0, 3);
  }
}

function firstLine(task: string): string {
  const line = (task.trim().split('\n')[0] ?? '').trim();
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}
