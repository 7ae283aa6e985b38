import path from 'node:path';
import { DEFAULT_APPLY_POLICY, type ApplyPolicyOptions } from './apply-policy.js';
import type { BackendName, BackendSandbox, BackendSession, BaseChange, SessionContext } from './backend.js';
import { takeSnapshot, type Snapshot } from './base-snapshot.js';
import { resolveContainment, withNetworkProxy, type SessionContainment } from './containment.js';
import { returnBaseToPool } from './base-pool.js';
import { dropUnusedDeltas } from './delta-layer.js';
import type { NetworkProxy } from './network-proxy.js';
import { SandboxError } from './errors.js';
import { removeTree } from './fs-util.js';
import { gc } from './gc.js';
import { holdSandboxes } from './hold-sandboxes.js';
import { dropRegistry, writeRegistry, type SandboxRegistry } from './registry.js';
import { resolveRepo, type RepoInfo } from './repo.js';
import { RwLock } from './rw-lock.js';
import { Sandbox, type SandboxOwner } from './sandbox.js';
import { touchRecord, writeRecord, type RefreshedBase, type SessionRecord } from './session-record.js';
import { registryOf, sandboxesOf } from './session-registry.js';
import { beginFreshSession, completeFreshSession, type Begun } from './session-fresh.js';
import { giveBack, takeOverSession } from './session-resume.js';
import { defaultStateDir, requireStateDirOutside } from './state-dir.js';
import { treeChanges } from './tree-changes.js';
import { shownName } from './utf8-names.js';
import { workingTreeChanges } from './working-tree-changes.js';

import type { BaseRefresh, CloseOptions, LostSandbox, OpenSessionOptions, RefreshOptions } from './session-types.js';
import { timed } from './timing.js';

export type { BaseRefresh, CloseOptions, LostSandbox, OpenSessionOptions, RefreshOptions } from './session-types.js';
export type { SessionRecord } from './session-record.js';

// A crashed session's age counts from its owner's last sign of life.
const HEARTBEAT_MS = 10 * 60_000;

/**
 * One agent session over one repository: a snapshot of the working tree taken at open,
 * materialised once, and the stack of sandboxes the threads work in. Its sandboxes are listed
 * in a durable registry, so a later process can resume it (see OpenSessionOptions.resume).
 */
export class SandboxSession {
  private readonly sandboxes = new Map<string, Sandbox>();
  /** Ids being created, so concurrent creates with the same thread id fail fast. */
  private readonly reserved = new Set<string>();
  private readonly owner: SandboxOwner;
  private counter = 0;
  private closed = false;
  /** Set by a deleting close: nothing may write the registry back. */
  private registryDropped = false;
  private saving: Promise<void> = Promise.resolve();
  private readonly heartbeat: NodeJS.Timeout;
  private lostOnResume: LostSandbox[] = [];
  /** The filtering proxy of a session with a domain allowlist (see ContainmentOptions.network). */
  private proxy: NetworkProxy | undefined;
  /** create() holds it shared, a base refresh exclusively: no sandbox is made while the base moves. */
  private readonly structure = new RwLock();
  /** One base refresh at a time. */
  private readonly refreshing = new RwLock();
  /** A refresh that switched the base but could not move every sandbox; finished by the next one. */
  private unfinishedRebase: BaseChange | undefined;
  /** Set once the session is ready (see `ready`): its snapshot, base and backend. */
  private opened: { ctx: SessionContext; backendSession: BackendSession; record: SessionRecord } | undefined;
  /** Resolves once the snapshot is taken and the base is ready; see OpenSessionOptions.background. */
  readonly ready: Promise<void>;
  private markReady!: (outcome: Error | undefined) => void;

  private constructor(
    /** Known before the session is ready: its id, directory, repository and state dir. */
    private readonly early: { sessionId: string; sessionDir: string; repo: RepoInfo; stateDir: string },
    readonly backend: BackendName,
    policy: ApplyPolicyOptions,
  ) {
    // `ctx` is read when used: it exists only once the session is ready.
    const owner = {
      policy,
      unregister: (sb: Sandbox) => this.unregister(sb),
      collectGarbage: () => this.collectGarbage(),
      save: () => this.persist(),
    };
    this.owner = Object.defineProperty(owner, 'ctx', { get: () => this.ctx, enumerable: true }) as typeof owner & { readonly ctx: SessionContext };
    this.heartbeat = setInterval(() => void touchRecord(early.sessionDir), HEARTBEAT_MS);
    this.heartbeat.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = (err) => (err ? reject(err) : resolve());
    });
    // Callers that never wait for it (a session closed before it was ever used) must not see an
    // unhandled rejection: whoever uses the session gets the error from there.
    this.ready.catch(() => undefined);
  }

  /** @internal Paths and identities shared with the backend; only once the session is ready. */
  get ctx(): SessionContext {
    if (!this.opened) throw new SandboxError('internal', 'The sandbox session is not ready yet: wait for session.ready.');
    return this.opened.ctx;
  }

  private get backendSession(): BackendSession {
    return this.ctx && this.opened!.backendSession;
  }

  private get record(): SessionRecord {
    return this.ctx && this.opened!.record;
  }

  private set record(record: SessionRecord) {
    this.opened!.record = record;
  }

  private attach(ctx: SessionContext, backendSession: BackendSession, record: SessionRecord, proxy: NetworkProxy | undefined): void {
    this.opened = { ctx, backendSession, record };
    this.proxy = proxy;
  }

  static async open(opts: OpenSessionOptions): Promise<SandboxSession> {
    const stateDir = path.resolve(opts.stateDir ?? defaultStateDir());
    const repo = await resolveRepo(opts.repo, opts.allowFolder ? { folderStateDir: stateDir } : {});
    requireStateDirOutside(repo.root, stateDir);
    // Sessions of this repository are never collected here, whatever their age: the user may be
    // about to resume one (or is resuming one right now).
    const collect = (): Promise<unknown> =>
      opts.collectStale ?? true
        ? gc({ stateDir, keepRepo: repo.root, ...(opts.keepDays !== undefined ? { keepDays: opts.keepDays } : {}) })
        : Promise.resolve();
    const policy = { ...DEFAULT_APPLY_POLICY, ...definedOnly(opts.applyPolicy ?? {}) };
    if (opts.resume === undefined && opts.background) {
      const session = await SandboxSession.begin(repo, stateDir, opts.backend, policy);
      // Cleaning up after others is nobody's wait: it runs beside the snapshot.
      void session.prepare(Promise.all([collect(), resolveContainment(opts.containment, stateDir)]).then(([, c]) => c));
      return session;
    }
    await collect();
    const containment = await resolveContainment(opts.containment, stateDir);
    if (opts.resume !== undefined) return SandboxSession.resume(opts.resume, repo, stateDir, opts.backend, containment, policy);
    const session = await SandboxSession.begin(repo, stateDir, opts.backend, policy);
    await session.prepare(Promise.resolve(containment));
    await session.ready;
    return session;
  }

  /** A fresh session, owned and recorded, not ready yet: prepare() takes the snapshot. */
  private static async begin(
    repo: RepoInfo,
    stateDir: string,
    choice: OpenSessionOptions['backend'],
    policy: ApplyPolicyOptions,
  ): Promise<SandboxSession> {
    const begun = await beginFreshSession(repo, stateDir, choice);
    const session = new SandboxSession({ sessionId: begun.sessionId, sessionDir: begun.sessionDir, repo, stateDir }, begun.backend.name, policy);
    session.begun = begun;
    return session;
  }

  private begun: Begun | undefined;

  /**
   * Takes the snapshot, materialises the base and opens the backend; settles `ready`. Nothing is
   * left behind when it fails (the session directory is removed).
   */
  private async prepare(containment: Promise<SessionContainment>): Promise<void> {
    const begun = this.begun!;
    this.begun = undefined;
    let proxy: NetworkProxy | undefined;
    try {
      // Both settle before anything is cleaned up: a snapshot still running must not write into a
      // directory being removed.
      const [resolved, started] = await Promise.allSettled([containment, completeFreshSession(begun)]);
      if (resolved.status === 'rejected') throw resolved.reason;
      if (started.status === 'rejected') throw started.reason;
      const opened = await withNetworkProxy(resolved.value, started.value.ctx.tmpDir);
      proxy = opened.proxy;
      const backendSession = await begun.backend.open(started.value.ctx, opened.containment);
      this.attach(started.value.ctx, backendSession, started.value.record, proxy);
      this.markReady(undefined);
    } catch (err) {
      await proxy?.close();
      await removeTree(begun.sessionDir);
      clearInterval(this.heartbeat);
      this.markReady(err as Error);
    }
  }

  private static async resume(
    id: string,
    repo: RepoInfo,
    stateDir: string,
    choice: OpenSessionOptions['backend'],
    containment: SessionContainment,
    policy: ApplyPolicyOptions,
  ): Promise<SandboxSession> {
    const { ctx, backend, record, registry } = await takeOverSession({ id, repo, stateDir, backend: choice });
    let proxy: NetworkProxy | undefined;
    try {
      const opened = await withNetworkProxy(containment, ctx.tmpDir);
      proxy = opened.proxy;
      const backendSession = await backend.open(ctx, opened.containment);
      const live = registry.sandboxes.filter((e) => !e.discarded);
      const { sandboxes: handles, lost } = await backendSession.restore(live.map((e) => ({ name: e.name, state: e.state })));
      const session = new SandboxSession({ sessionId: ctx.sessionId, sessionDir: ctx.sessionDir, repo, stateDir }, backend.name, policy);
      session.attach(ctx, backendSession, record, proxy);
      session.markReady(undefined);
      try {
        // Only the damaged sandboxes are dropped (their children read them as discarded).
        session.lostOnResume = live.filter((e) => lost.has(e.name)).map((e) => ({ id: e.id, reason: lost.get(e.name)! }));
        session.adopt(registry, handles);
        // The backend may have repaired what a crash interrupted; record the result.
        await session.persist();
        // A crash in the middle of a refresh: the base moved, some sandboxes may not have.
        if (record.rebasing) await session.rebaseAll(session.list(), await session.changeFrom(record.rebasing.from));
      } catch (err) {
        clearInterval(session.heartbeat);
        throw err;
      }
      return session;
    } catch (err) {
      await proxy?.close();
      await giveBack(ctx.sessionDir, record, err);
      throw err;
    }
  }

  /** Takes over the sandboxes a registry lists (see sandboxesOf). */
  private adopt(registry: SandboxRegistry, handles: Map<string, BackendSandbox>): void {
    const { live, counter } = sandboxesOf(registry, handles, this.owner);
    for (const [id, sb] of live) this.sandboxes.set(id, sb);
    this.counter = counter;
  }

  get id(): string {
    return this.early.sessionId;
  }

  get repo(): RepoInfo {
    return this.early.repo;
  }

  get snapshot(): Snapshot {
    return this.ctx.snapshot;
  }

  /**
   * Sandboxes this session had but could not bring back when it was resumed, because their
   * storage was damaged (by something outside this package: a crash of ours never leaves that).
   * Every other sandbox came back; a lost one's children see it as a discarded parent. Empty for
   * a fresh session and for any resume that found everything intact.
   */
  get lost(): readonly LostSandbox[] {
    return this.lostOnResume;
  }

  /**
   * A new sandbox for `thread`. With a parent it stacks on the parent's current state: the
   * parent's top layer is frozen (O(1)) and both continue on fresh layers above it. It is in
   * the session's durable registry (resumable) once this resolves.
   */
  async create(thread?: string, parent?: Sandbox): Promise<Sandbox> {
    this.assertOpen();
    await this.ready;
    return this.structure.shared(() => this.createNow(thread, parent));
  }

  private async createNow(thread?: string, parent?: Sandbox): Promise<Sandbox> {
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
      const sb = new Sandbox(id, name, parent, handle, this.owner);
      this.sandboxes.set(id, sb);
      try {
        await this.persist();
      } catch (err) {
        this.sandboxes.delete(id);
        await handle.destroy().catch(() => undefined);
        throw err;
      }
      return sb;
    } finally {
      this.reserved.delete(id);
    }
  }

  /**
   * Working-tree paths (files and symlinks; modified, added or deleted) that differ from the
   * session's current snapshot: what refreshBase() would bring in now. With `except`, paths
   * where the working tree has exactly what that sandbox has, or what it received from it (some
   * hunks of a file accepted), are left out: changes that came from it (applyToWorkingTree) are
   * not the user's. Costs what a snapshot does (the user's index
   * stat cache means only changed files are read), and writes nothing the sandboxes use. Names
   * that are not UTF-8 read as git shows them (`caf\351.txt`).
   */
  async changedSinceSnapshot(opts: { except?: Sandbox } = {}): Promise<string[]> {
    this.assertOpen();
    await this.ready;
    return workingTreeChanges(this.ctx, opts.except);
  }

  /**
   * Brings the user's edits made since the snapshot into every live sandbox: a new snapshot of
   * the working tree is taken (the same way as at open), and what differs from the current one
   * becomes part of the base, beneath each sandbox's own layers. Every sandbox then sees the
   * user's new content (deletions included) except at paths it or an ancestor changed itself:
   * there its own version stays (reported in `overridden`). Diffs are taken against the new
   * snapshot from then on, so the root's diff holds only the agents' work and applying it does
   * not undo the user's edits elsewhere. Sandboxes created later start from the new snapshot.
   *
   * Cost follows the files that differ from the snapshot taken at open, not the repository:
   * on the overlay backends one delta layer (rebuilt from the base at each refresh, so stacks
   * never grow) sits between the base and every sandbox's layers; the copy backend writes the
   * changed files into each copy.
   *
   * Commands: on the overlay backends the views are remounted, so the refresh waits until no
   * command runs in any sandbox (file operations go on meanwhile; commands started during the
   * switch wait for it, a few milliseconds). `signal` gives up that wait. On the copy backend,
   * files change under running commands, as if the user had edited them there.
   */
  async refreshBase(opts: RefreshOptions = {}): Promise<BaseRefresh> {
    this.assertOpen();
    await this.ready;
    return this.refreshing.exclusive(async () => {
      const { repo, objectsDir, tmpDir, sessionDir } = this.ctx;
      const next = await takeSnapshot(repo, objectsDir, tmpDir);
      if (next.tree === this.ctx.snapshot.tree && !this.unfinishedRebase) {
        return { files: [], overridden: [], overriddenBy: {}, snapshot: this.ctx.snapshot };
      }
      const number = (this.record.refreshed?.number ?? 0) + 1;
      let switched = false;
      try {
        const prepared = await this.backendSession.prepareBase(next, number);
        return await holdSandboxes(this.structure, () => this.list(), this.backendSession.rebaseNeedsIdle, opts.signal, async (sandboxes) => {
          this.assertOpen();
          if (this.unfinishedRebase) await this.rebaseAll(sandboxes, this.unfinishedRebase);
          const refreshed: RefreshedBase = { number, snapshot: next, index: prepared.index, ...(prepared.layer ? { layer: prepared.layer } : {}) };
          const change = await this.changeFrom(this.ctx.snapshot, next);
          // The commit point: from here on a resume finishes the refresh rather than forget it.
          this.record = { ...this.record, refreshed, rebasing: { from: change.from } };
          await writeRecord(sessionDir, this.record);
          switched = true;
          this.ctx.snapshot = next;
          this.ctx.baseIndex = path.join(sessionDir, refreshed.index);
          this.ctx.deltaLayer = refreshed.layer;
          await this.rebaseAll(sandboxes, change);
          const overriddenBy: Record<string, string[]> = {};
          for (const sb of sandboxes) {
            const paths = await this.backendSession.overridden(sb.handle, change);
            if (paths.length > 0) overriddenBy[sb.id] = paths.map(shownName);
          }
          // No view uses the previous delta any more: every sandbox was released by its rebase.
          await dropUnusedDeltas(sessionDir, refreshed);
          const overridden = [...new Set(Object.values(overriddenBy).flat())].sort();
          return { files: change.changes.map((c) => shownName(c.path)), overridden, overriddenBy, snapshot: next };
        });
      } catch (err) {
        // Built but never used: a cancelled or failed refresh leaves the session as it was.
        if (!switched) await dropUnusedDeltas(sessionDir, this.record.refreshed).catch(() => undefined);
        throw err;
      }
    });
  }

  /** @internal The change from `from` to the current snapshot (or `to`). */
  async changeFrom(from: Snapshot, to: Snapshot = this.ctx.snapshot): Promise<BaseChange> {
    return { from, to, changes: await treeChanges(this.ctx, from.tree, to.tree) };
  }

  /**
   * @internal Moves `sandboxes` (held exclusively, or not yet handed out by a resume) onto the
   * current base, records their new state, then marks the refresh finished. A sandbox that
   * fails keeps the refresh unfinished: the next refresh, or a resume, repeats the move.
   */
  async rebaseAll(sandboxes: readonly Sandbox[], change: BaseChange): Promise<void> {
    const failed: string[] = [];
    let firstError: unknown;
    for (const sb of sandboxes) {
      try {
        // Its view moves to the new snapshot: no diff made before holds.
        sb.changed();
        await this.backendSession.rebase(sb.handle, change);
        sb.changed();
      } catch (err) {
        failed.push(sb.id);
        firstError ??= err;
      }
    }
    await this.persist();
    if (failed.length > 0) {
      this.unfinishedRebase = change;
      throw new SandboxError(
        'internal',
        `The base was refreshed, but sandbox(es) ${failed.join(', ')} could not be moved onto it: ${(firstError as Error).message}. ` +
          'Refresh again to retry; until then they see the previous snapshot.',
        { cause: firstError },
      );
    }
    this.unfinishedRebase = undefined;
    const { rebasing: _done, ...rest } = this.record;
    this.record = rest;
    await writeRecord(this.ctx.sessionDir, this.record);
  }

  private assertOpen(): void {
    if (this.closed) throw new SandboxError('discarded', 'This sandbox session was closed; open a new one.');
  }

  get(id: string): Sandbox | undefined {
    return this.sandboxes.get(id);
  }

  list(): Sandbox[] {
    return [...this.sandboxes.values()];
  }

  private async unregister(sb: Sandbox): Promise<void> {
    if (this.sandboxes.get(sb.id) === sb) this.sandboxes.delete(sb.id);
    await this.persist();
  }

  private async collectGarbage(): Promise<void> {
    await this.backendSession.collectGarbage();
  }

  /**
   * Writes the registry (write temp + rename), one write at a time, each with the state at the
   * moment it runs, so the last one to finish is the latest.
   */
  private persist(): Promise<void> {
    const run = this.saving.then(() => (this.registryDropped ? undefined : writeRegistry(this.early.sessionDir, registryOf(this.sandboxes.values(), this.counter + 1))));
    this.saving = run.catch(() => undefined);
    return run;
  }

  /**
   * Ends the session in this process. By default discards every sandbox and deletes the
   * session's storage (base, layers, objects). With `keep`, stops commands and sandbox
   * processes but keeps the storage for `openSession({ resume: session.id })`.
   */
  async close(opts: CloseOptions = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A session still being prepared is closed once that is over; one whose preparation failed
    // left nothing behind.
    if (!(await this.ready.then(() => true, () => false))) return;
    // A sandbox still being created (a child spawned just before a quit) gets its processes
    // after this point: wait for it (creations hold the structure lock shared; new ones are now
    // refused), so that it is stopped below with the others instead of outliving the session.
    await this.structure.exclusive(() => Promise.resolve());
    clearInterval(this.heartbeat);
    await this.proxy?.close();
    const dir = this.early.sessionDir;
    if (opts.keep) {
      // Every sandbox's processes at once: each waits for its namespace to be torn down.
      await Promise.all(this.list().map((sb) => sb.detach()));
      await this.persist();
      await writeRecord(dir, { ...this.record, owner: null, leftAt: new Date().toISOString() });
      return;
    }
    // Unresumable first: a crash halfway through the delete must not leave a session that looks whole.
    this.registryDropped = true;
    await this.saving;
    await dropRegistry(dir);
    // The whole session goes, so no sandbox is discarded one by one (children first, collecting
    // layers as they go): every sandbox's processes and mounts are released at once, then the
    // storage is removed whole.
    await Promise.all(this.list().map((sb) => sb.dispose()));
    // Nothing mounts or reads the base any more: the next session of this repository starts from
    // it (see base-pool.ts) instead of checking the whole tree out again, and removing it here
    // costs nothing. The refreshed snapshot's index is the session's own; the base keeps its own.
    const { baseDir, baseDirIndex, baseTree } = this.ctx;
    await returnBaseToPool(this.early.stateDir, this.early.repo, baseDir, baseDirIndex, baseTree).catch(() => undefined);
    await removeTree(dir);
  }
}

/** `o` without its undefined fields, so they do not override defaults when spread. */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export async function openSession(opts: OpenSessionOptions): Promise<SandboxSession> {
  const startedAt = performance.now();
  const session = await SandboxSession.open(opts);
  timed('session-open', startedAt, () => session.backend);
  return session;
}
