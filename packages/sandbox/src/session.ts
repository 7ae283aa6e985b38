import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BackendName, BackendSession, SandboxBackend, SessionContext } from './backend.js';
import { materializeBase, objectEnv, takeSnapshot, type Snapshot } from './base-snapshot.js';
import { SandboxError } from './errors.js';
import { removeTree } from './fs-util.js';
import { gc } from './gc.js';
import { backendByName, probeBackends } from './probe.js';
import { identify } from './proc.js';
import { findHeavyDirs, isWithin, resolveRepo, type RepoInfo } from './repo.js';
import { Sandbox } from './sandbox.js';
import { defaultStateDir, sessionsDir } from './state-dir.js';

export interface OpenSessionOptions {
  /** Any path inside the user's repository. */
  repo: string;
  /** Storage root; `$XDG_STATE_HOME/infinity-code` (or `~/.local/state/infinity-code`) by default. */
  stateDir?: string;
  /** Backend to use; chosen by the start-up probe when omitted. */
  backend?: BackendName | SandboxBackend;
  /** Remove leftovers of crashed sessions in `stateDir` first (default true). */
  collectStale?: boolean;
}

/** On-disk record that lets gc() tell a crashed session from a live one. */
export interface SessionRecord {
  version: 1;
  owner: { pid: number; start: string };
  repo: string;
  backend: BackendName;
  snapshot?: Snapshot;
  createdAt: string;
}

/**
 * One agent session over one repository: a snapshot of the working tree taken at open,
 * materialised once, and the stack of sandboxes the threads work in.
 */
export class SandboxSession {
  private readonly sandboxes = new Map<string, Sandbox>();
  /** Ids being created, so concurrent creates with the same thread id fail fast. */
  private readonly reserved = new Set<string>();
  private counter = 0;
  private closed = false;

  private constructor(
    /** @internal Paths and identities shared with the backend. */
    readonly ctx: SessionContext,
    readonly backend: BackendName,
    private readonly backendSession: BackendSession,
  ) {}

  static async open(opts: OpenSessionOptions): Promise<SandboxSession> {
    const repo = await resolveRepo(opts.repo);
    const stateDir = path.resolve(opts.stateDir ?? defaultStateDir());
    if (isWithin(repo.root, stateDir) || isWithin(stateDir, repo.root)) {
      throw new SandboxError(
        'bad-state-dir',
        `The sandbox state directory ${stateDir} overlaps the repository ${repo.root}. ` +
          'Sandboxes must be stored outside the repository: set XDG_STATE_HOME or pass another stateDir.',
      );
    }
    await mkdir(sessionsDir(stateDir), { recursive: true });
    if (opts.collectStale ?? true) await gc({ stateDir });
    const backend = await pickBackend(opts.backend, stateDir, repo);

    const sessionId = `${Date.now().toString(36)}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const sessionDir = path.join(sessionsDir(stateDir), sessionId);
    await mkdir(sessionDir, { recursive: true });
    const record: SessionRecord = {
      version: 1,
      owner: await identify(process.pid),
      repo: repo.root,
      backend: backend.name,
      createdAt: new Date().toISOString(),
    };
    await writeFile(path.join(sessionDir, 'session.json'), JSON.stringify(record));
    try {
      const objectsDir = path.join(sessionDir, 'objects');
      const tmpDir = path.join(sessionDir, 'tmp');
      await mkdir(objectsDir, { recursive: true });
      await mkdir(tmpDir, { recursive: true });
      const snapshot = await takeSnapshot(repo, objectsDir, tmpDir);
      const baseDir = path.join(sessionDir, 'base');
      const baseIndex = path.join(sessionDir, 'base.index');
      await materializeBase(repo, snapshot, objectsDir, baseDir, baseIndex);
      await writeFile(path.join(sessionDir, 'session.json'), JSON.stringify({ ...record, snapshot }));
      const ctx: SessionContext = {
        sessionId,
        sessionDir,
        repo,
        snapshot,
        baseDir,
        baseIndex,
        objectsDir,
        tmpDir,
        heavyDirs: await findHeavyDirs(repo),
        objectEnv: objectEnv(repo, objectsDir),
      };
      return new SandboxSession(ctx, backend.name, await backend.open(ctx));
    } catch (err) {
      await removeTree(sessionDir);
      throw err;
    }
  }

  get id(): string {
    return this.ctx.sessionId;
  }

  get repo(): RepoInfo {
    return this.ctx.repo;
  }

  get snapshot(): Snapshot {
    return this.ctx.snapshot;
  }

  /**
   * A new sandbox for `thread`. With a parent it stacks on the parent's current state: the
   * parent's top layer is frozen (O(1)) and both continue on fresh layers above it.
   */
  async create(thread?: string, parent?: Sandbox): Promise<Sandbox> {
    if (this.closed) throw new SandboxError('discarded', 'This sandbox session was closed; open a new one.');
    const name = `s${++this.counter}`;
    const id = thread ?? name;
    if (this.sandboxes.has(id) || this.reserved.has(id)) {
      throw new SandboxError('invalid-argument', `A sandbox for "${id}" already exists in this session; discard it first or use another id.`);
    }
    if (parent && (parent.isDiscarded || this.sandboxes.get(parent.id) !== parent)) {
      throw new SandboxError('discarded', `Parent sandbox ${parent.id} is not live in this session; it cannot be stacked on.`);
    }
    this.reserved.add(id);
    try {
      const handle = parent
        ? await parent.lock.exclusive(async () => {
            // Re-checked under the lock: a discard may have run while we waited for it.
            if (parent.isDiscarded) {
              throw new SandboxError('discarded', `Parent sandbox ${parent.id} was discarded; it cannot be stacked on.`);
            }
            return this.backendSession.spawnChild(parent.handle, name, { parentBusy: parent.busy });
          })
        : await this.backendSession.createRoot(name);
      const sb = new Sandbox(id, parent, handle, { ctx: this.ctx, forget: (s) => this.forget(s) });
      this.sandboxes.set(id, sb);
      return sb;
    } finally {
      this.reserved.delete(id);
    }
  }

  get(id: string): Sandbox | undefined {
    return this.sandboxes.get(id);
  }

  list(): Sandbox[] {
    return [...this.sandboxes.values()];
  }

  private async forget(sb: Sandbox): Promise<void> {
    if (this.sandboxes.get(sb.id) === sb) this.sandboxes.delete(sb.id);
    await this.backendSession.collectGarbage(this.list().map((s) => s.handle));
  }

  /** Discards every sandbox and deletes the session's storage (base, layers, objects). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Children first, so no layer is freed while something still stacks on it.
    const depth = (s: Sandbox): number => (s.parent ? 1 + depth(s.parent) : 0);
    const all = this.list().sort((a, b) => depth(b) - depth(a));
    for (const sb of all) await sb.discard();
    await removeTree(this.ctx.sessionDir);
  }
}

async function pickBackend(
  choice: OpenSessionOptions['backend'],
  stateDir: string,
  repo: RepoInfo,
): Promise<SandboxBackend> {
  if (choice !== undefined && typeof choice !== 'string') return choice;
  const backend = choice ? backendByName(choice) : backendByName((await probeBackends(stateDir)).chosen);
  const problem = backend.mountsAtRepoPath ? overlayObstacle(repo, stateDir) : undefined;
  if (problem === undefined) return backend;
  if (choice) {
    throw new SandboxError('backend-unavailable', `The ${backend.name} backend cannot serve this repository: ${problem}. Use the copy backend here.`);
  }
  return backendByName('copy');
}

export function openSession(opts: OpenSessionOptions): Promise<SandboxSession> {
  return SandboxSession.open(opts);
}

/** Layouts the overlay backends cannot mount, whatever the kernel allows. */
function overlayObstacle(repo: RepoInfo, stateDir: string): string | undefined {
  if (!repo.dotGitIsDir) return `${repo.root}/.git is not a directory (a linked worktree or submodule)`;
  // overlay's mount options are comma separated and lowerdir is colon separated.
  if (/[,:]/.test(repo.root) || /[,:]/.test(stateDir)) return 'its path or the state dir contains "," or ":"';
  return undefined;
}
