import { refuseUnsafeChanges } from './apply-guard.js';
import type { ApplyPolicyOptions } from './apply-policy.js';
import { applyDirect } from './apply-direct.js';
import { applyPatch, type ApplyResult } from './apply.js';
import type { BackendSandbox, DiffSince, SessionContext } from './backend.js';
import type { ViewStamp } from './view-stamp.js';
import { deliveredTree, treeWithPatch, type Delivered } from './delivered.js';
import { DiskWatch } from './disk-watch.js';
import type { SandboxDiff } from './diff.js';
import { SandboxError, SandboxPathError } from './errors.js';
import { policyDiff, stillFitsWorkingTree } from './policy-diff.js';
import { collect, mergeEnv, watchProcess, type ExecOptions, type ExecProcess, type ExecResult } from './exec.js';
import { RwLock } from './rw-lock.js';
import { sealGit, userRepoGit } from './trusted-git.js';
import { ViewFs, type DirEntry, type FileStat } from './view-fs.js';
import { timed } from './timing.js';
import { execLine, shellWord } from './shell-word.js';

export interface DiffOptions {
  /** 'spawn' (default): this sandbox's own changes; 'snapshot': its stack's since the snapshot. */
  since?: DiffSince;
  /** Files bigger than this (bytes) are left out, at their old version; default: the session's. */
  maxFileBytes?: number;
}

/** What a Sandbox needs from the session that owns it. */
export interface SandboxOwner {
  readonly ctx: SessionContext;
  /** What diffs leave out (see OpenSessionOptions.applyPolicy). */
  readonly policy: ApplyPolicyOptions;
  /**
   * Drops a sandbox being discarded from the session and its durable registry. Called before its
   * storage goes, so a crash in between leaves unlisted storage (deleted on resume), never a
   * registry entry without storage.
   */
  unregister(sb: Sandbox): Promise<void>;
  /** Called once a sandbox's storage is gone: frees layers nobody stacks on any more. */
  collectGarbage(): Promise<void>;
  /** Writes the session's durable registry (what a sandbox delivered to the working tree is part of it). */
  save(): Promise<void>;
}

// Stands in for the storage of a discarded sandbox brought back only as a parent (see placeholder).
const NO_STORAGE: BackendSandbox = {
  dir: '',
  commandRoot: '',
  contained: false,
  viewOwner: undefined,
  viewRoot: () => Promise.reject(new Error('discarded')),
  git: () => Promise.reject(new Error('discarded')),
  spawn: () => Promise.reject(new Error('discarded')),
  changeTrees: () => Promise.reject(new Error('discarded')),
  release: () => Promise.resolve(),
  destroy: () => Promise.resolve(),
  saveState: () => undefined,
};

/**
 * One thread's private, copy-on-write view of the repository. File operations and commands
 * see the merged view; nothing reaches the user's working tree until applyToWorkingTree().
 */
export class Sandbox {
  /** @internal Serialises structural changes (spawn, discard) against operations. */
  readonly lock = new RwLock();
  private readonly running = new Set<ExecProcess>();
  private readonly fs: ViewFs;
  /** Holds its storage to the disk limit, where the backend can measure it. */
  private readonly disk: DiskWatch | undefined;
  private discarded = false;
  /** Counts changes to the view (see cachedDiff); a diff made at one count holds until the next. */
  private generation = 0;
  private readonly diffs = new Map<string, { generation: number; diff: Promise<SandboxDiff> }>();
  /** Checks whether ended commands changed the view (see exec): diffs wait for them. */
  private readonly settling = new Set<Promise<void>>();
  /** Set when the session was closed with `keep`: the sandbox lives on, but not in this object. */
  private detached = false;
  /** One delivery to the working tree at a time: each starts from what the one before recorded. */
  private delivering: Promise<unknown> = Promise.resolve();

  /** @internal */
  constructor(
    readonly id: string,
    /** @internal Storage name, unique in the session for its lifetime (ids may be reused). */
    readonly key: string,
    readonly parent: Sandbox | undefined,
    /** @internal */ readonly handle: BackendSandbox,
    private readonly owner: SandboxOwner,
    /** @internal What the working tree has received from it (see workingTreeDiff), kept in the session's registry. */
    private deliveredRecord?: Delivered,
  ) {
    this.fs = new ViewFs(() => handle.viewRoot(), [owner.ctx.repo.root, handle.commandRoot], handle.viewOwner);
    const limitBytes = handle.diskLimitBytes;
    this.disk =
      handle.storageBytes && limitBytes !== undefined
        ? new DiskWatch({ limitBytes, measure: () => handle.storageBytes!(), dir: handle.dir })
        : undefined;
  }

  /**
   * @internal A discarded sandbox brought back by a resume only because live children name it
   * as their parent: `parent` relationships read as before, and using it fails as it did.
   */
  static placeholder(id: string, key: string, parent: Sandbox | undefined, owner: SandboxOwner): Sandbox {
    const sb = new Sandbox(id, key, parent, NO_STORAGE, owner);
    sb.discarded = true;
    return sb;
  }

  /** Absolute path at which commands run by exec() see the repository root. */
  get root(): string {
    return this.handle.commandRoot;
  }

  /**
   * True when commands run contained (see ContainmentOptions): the machine read-only, credentials
   * hidden, network as configured. False where no confinement is possible here: then commands
   * reach whatever the user can, and callers must ask the user before running one.
   */
  get contained(): boolean {
    return this.handle.contained;
  }

  get isDiscarded(): boolean {
    return this.discarded;
  }

  /** @internal Commands still running (spawning a child on an overlay must not unmount them). */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /** @internal Resolves once every command started so far has ended. */
  async whenIdle(): Promise<void> {
    await Promise.allSettled([...this.running].map((p) => p.done));
  }

  readFile(p: string): Promise<Buffer> {
    return this.op(() => this.fs.readFile(p));
  }

  async readText(p: string): Promise<string> {
    return (await this.readFile(p)).toString('utf8');
  }

  /**
   * Creates or overwrites a file, creating missing parent directories. Refused (DiskLimitError)
   * where it would take the sandbox's storage over its disk limit.
   */
  writeFile(p: string, data: string | Uint8Array, opts: { mode?: number } = {}): Promise<void> {
    return this.op(
      async () => {
        await this.disk?.admit(typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength);
        await this.fs.writeFile(p, data, opts);
      },
      { changes: true },
    );
  }

  mkdir(p: string): Promise<void> {
    return this.op(
      async () => {
        await this.disk?.admit(0);
        await this.fs.mkdir(p);
      },
      { changes: true },
    );
  }

  /** Never refused for the disk limit: deleting is how a sandbox gets back under it. */
  remove(p: string, opts: { recursive?: boolean } = {}): Promise<void> {
    return this.op(
      async () => {
        await this.fs.remove(p, opts);
        // The next command or write then starts from a figure that counts this delete.
        if (this.disk?.over) await this.disk.recheck();
      },
      { changes: true },
    );
  }

  rename(from: string, to: string): Promise<void> {
    return this.op(() => this.fs.rename(from, to), { changes: true });
  }

  /** Refused over the disk limit: on an overlay, changing a file's mode copies the whole file up. */
  chmod(p: string, mode: number): Promise<void> {
    return this.op(
      async () => {
        await this.disk?.admit(0);
        await this.fs.chmod(p, mode);
      },
      { changes: true },
    );
  }

  stat(p: string): Promise<FileStat> {
    return this.op(() => this.fs.stat(p));
  }

  exists(p: string): Promise<boolean> {
    return this.op(() => this.fs.exists(p));
  }

  list(p = '', opts: { recursive?: boolean } = {}): Promise<DirEntry[]> {
    return this.op(() => this.fs.list(p, opts));
  }

  /**
   * Runs a shell command in the merged view and streams its output. On overlay backends the
   * view is mounted at the repository's own path, so absolute paths work and cannot reach the
   * user's files. Aborting `signal` kills the command's process group. An argv runs that
   * program with those arguments, each passed as it is.
   */
  async exec(commandOrArgv: string | readonly string[], opts: ExecOptions = {}): Promise<ExecProcess> {
    const command = typeof commandOrArgv === 'string' ? commandOrArgv : execLine(commandOrArgv);
    const startedAt = performance.now();
    return this.op(async () => {
      // A command may change anything in the view, at any time until it ends. No diff is kept
      // or served while it runs; once it ended, a stamp of the view taken now and again then
      // says whether it did (most test and build runs change nothing a diff sees), and only if
      // it did do diffs made before it stop holding. A diff prepared while the model asked for
      // the test run then still holds once the test ran.
      const before = await this.handle.viewStamp?.();
      if (before === undefined) this.changed();
      // Resolved like file paths: no escape through `..` or symlinks, and a clear error if missing.
      const { rel: cwd } = await this.fs.resolve(opts.cwd ?? '');
      if ((await this.fs.stat(cwd)).type !== 'dir') throw new SandboxPathError(opts.cwd ?? '', 'is not a directory');
      // Over the disk limit a command still runs, to delete what it must, but can grow no file:
      // a write then fails with "File too large" (SIGXFSZ ignored) instead of killing the shell.
      const overDisk = this.disk?.over ?? false;
      const line = opts.shell ? `exec ${shellWord(opts.shell)} -c ${shellWord(command)}` : command;
      const { child, ...containment } = await this.handle.spawn({
        command: overDisk ? `trap '' XFSZ\n${line}` : line,
        cwd,
        env: mergeEnv(opts.env),
        ...(opts.network ? { network: true } : {}),
        ...(opts.stdin ? { stdin: true } : {}),
        ...(overDisk ? { noFileGrowth: true } : {}),
      });
      // Registered before the first await after spawn, so a discard cannot miss it.
      let proc: ExecProcess | undefined;
      // eslint-disable-next-line prefer-const -- a callback made before the assignment reads it
      proc = watchProcess(
        child,
        opts.signal,
        () => {
          if (proc) this.running.delete(proc);
          // Whatever the command wrote, it wrote before it ended.
          this.settleCommand(before);
          timed('command', startedAt, () => command.slice(0, 60));
        },
        containment,
      );
      this.running.add(proc);
      return this.disk ? this.disk.watch(proc, overDisk) : proc;
    });
  }

  /** exec() to completion, output collected. */
  async run(command: string | readonly string[], opts: ExecOptions = {}): Promise<ExecResult & { stdout: string; stderr: string }> {
    return collect(await this.exec(command, opts));
  }

  /**
   * This sandbox's own changes since it was created (or, with since 'snapshot', everything
   * its stack changed since the session's snapshot) as a git patch with binary hunks,
   * executable bits and renames. What may never leave a sandbox is left out and listed in
   * `omitted` with its reason: paths in `.git` or a reserved directory (`.infinity`), symlinks
   * leading out of the repository, nested git repositories, and files over `maxFileBytes`
   * (default: the session's, see OpenSessionOptions.applyPolicy).
   */
  async diff(opts: DiffOptions = {}): Promise<SandboxDiff> {
    const startedAt = performance.now();
    const diff = await this.op(() => this.cachedDiff(opts.since ?? 'spawn', opts));
    timed('diff', startedAt, () => `${this.id}, since ${opts.since ?? 'spawn'}, ${diff.files.length} files`);
    return diff;
  }

  /**
   * What this sandbox changed since the snapshot that the user's working tree has not received
   * from it yet (applyToWorkingTree), as it may be applied there: like diff({ since: 'snapshot' })
   * but from what was delivered already, and without files the working tree has where the
   * user's git rules ignore them (the agent never saw those; see OmitRule). After a base refresh
   * the snapshot holds whatever the working tree had, deliveries included, and the diff starts there.
   */
  async workingTreeDiff(opts: Omit<DiffOptions, 'since'> = {}): Promise<SandboxDiff> {
    return this.op(() => this.cachedDiff('snapshot', opts, this.owner.ctx.repo.root));
  }

  /**
   * Starts making workingTreeDiff() in the background, so that the next call gets it at once if
   * nothing in the view changed meanwhile (say, while a model writes what may be its last reply).
   * Does nothing while a command runs: the diff would not hold.
   */
  prepareWorkingTreeDiff(): void {
    if (this.discarded || this.detached || this.running.size > 0) return;
    void this.workingTreeDiff().catch(() => undefined);
  }

  /**
   * diffNow, answered from the last diff made with the same options while nothing in the view
   * has changed since (see `generation`): a caller may ask for a diff ahead of need (the CLI does
   * while the model writes its last reply) and get it at once when it needs it. A diff for the
   * working tree also depends on the files the user's tree has where their git rules ignore
   * them: those are checked again, and the diff is made afresh when they differ.
   */
  private async cachedDiff(since: DiffSince, opts: DiffOptions, workingTree?: string): Promise<SandboxDiff> {
    while (this.settling.size > 0) await Promise.all(this.settling);
    const key = `${since}\0${opts.maxFileBytes ?? ''}\0${workingTree ?? ''}`;
    const hit = this.diffs.get(key);
    if (hit && hit.generation === this.generation && this.running.size === 0) {
      const diff = await hit.diff.catch(() => undefined);
      if (diff && (workingTree === undefined || (await stillFitsWorkingTree(this.owner.ctx, diff))) && hit.generation === this.generation) return diff;
    }
    const generation = this.generation;
    const made = this.diffNow(since, opts, workingTree);
    // Kept only if nothing changed while it was made (and no command could have).
    if (this.running.size === 0) this.diffs.set(key, { generation, diff: made });
    const diff = await made;
    if (this.generation !== generation && this.diffs.get(key)?.diff === made) this.diffs.delete(key);
    return diff;
  }

  /**
   * After a command ended: the view changed unless a stamp taken now equals the one from its
   * start. Registered at once (diffs asked for meanwhile wait for the answer).
   */
  private settleCommand(before: ViewStamp | undefined): void {
    if (before === undefined) {
      this.changed();
      return;
    }
    const check = this.handle.viewStamp!(before).then(
      (after) => {
        if (after?.digest !== before.digest) this.changed();
      },
      () => this.changed(),
    );
    this.settling.add(check);
    void check.finally(() => this.settling.delete(check));
  }

  /** @internal The view changed (or may have): diffs made before no longer hold. */
  changed(): void {
    this.generation++;
    this.diffs.clear();
  }

  /** @internal What the working tree has received from this sandbox, for the session's registry. */
  get delivered(): Delivered | undefined {
    return this.deliveredRecord;
  }

  private async diffNow(since: DiffSince, opts: DiffOptions, workingTree?: string): Promise<SandboxDiff> {
    const trees = await this.handle.changeTrees(since);
    const { to, nestedRepos, tooLong } = trees;
    const delivered = workingTree === undefined ? undefined : deliveredTree(this.deliveredRecord, this.owner.ctx.snapshot.tree);
    return policyDiff(this.owner.ctx, {
      from: delivered ?? trees.from,
      to,
      nestedRepos: nestedRepos ?? [],
      tooLong: tooLong ?? [],
      view: { hostRoot: await this.handle.viewRoot(), git: sealGit(await this.handle.git(), this.owner.ctx.plumbingGitDir), workTree: this.handle.commandRoot },
      policy: opts.maxFileBytes === undefined ? this.owner.policy : { ...this.owner.policy, maxFileBytes: opts.maxFileBytes },
      ...(workingTree !== undefined ? { workingTree } : {}),
    });
  }

  /**
   * Applies this sandbox's own changes into `target` (its parent by default), 3-way: edits the
   * parent made after the spawn merge, overlapping ones are left with conflict markers.
   */
  async squashInto(target: Sandbox | undefined = this.parent): Promise<ApplyResult> {
    if (!target) {
      throw new SandboxError('invalid-argument', `Sandbox ${this.id} has no parent; use applyToWorkingTree() to accept its changes.`);
    }
    if (target === this) throw new SandboxError('invalid-argument', 'A sandbox cannot be squashed into itself.');
    return target.apply(await this.diff());
  }

  /**
   * Applies a diff (another sandbox's, or a reviewed subset of one) into this sandbox, 3-way:
   * edits made here meanwhile merge, overlapping ones are left with conflict markers.
   */
  async apply(diff: SandboxDiff): Promise<ApplyResult> {
    await refuseUnsafeChanges(this.owner.ctx, diff, this.owner.policy);
    const { ctx } = this.owner;
    // Not refused over the disk limit (what a review accepted lands), but measured after.
    const applied = await this.op(
      async () =>
        // Files this sandbox still has as the diff found them take the new version directly.
        (await applyDirect(ctx, this.fs, diff)) ??
        applyPatch(
          ctx,
          {
            // The session's git dir, not the sandbox's own .git: nothing a command configured there runs.
            git: sealGit(await this.handle.git(), ctx.plumbingGitDir),
            workTree: this.handle.commandRoot,
            hostRoot: await this.handle.viewRoot(),
            label: `sandbox ${this.id}`,
          },
          diff,
        ),
      { changes: true },
    );
    void this.disk?.recheck();
    return applied;
  }

  /**
   * Applies everything this sandbox changed since the snapshot (workingTreeDiff(), or `diff`, e.g.
   * a reviewed subset of it) to the user's working tree with a 3-way merge through a temporary
   * index; the user's index and HEAD stay as they were, and their own repository and config are
   * used (see trusted-git.ts). A diff holding what workingTreeDiff() leaves out (say, a file the
   * user's tree gained, ignored, during the review) is refused whole with SandboxError 'unsafe-change'.
   * What was applied is remembered, so later working-tree diffs leave it out; `remember: false`
   * spares that (git processes) when the sandbox is about to be discarded anyway.
   */
  async applyToWorkingTree(diff?: SandboxDiff, opts: { remember?: boolean } = {}): Promise<ApplyResult> {
    const run = this.delivering.then(() => this.deliver(diff, opts.remember !== false));
    this.delivering = run.catch(() => undefined);
    return run;
  }

  /**
   * Applies, then records what was applied (conflicts included: the markers are in the user's
   * hands now), so the next workingTreeDiff() offers only what the working tree has not received.
   */
  private async deliver(diff: SandboxDiff | undefined, remember: boolean): Promise<ApplyResult> {
    const patch = diff ?? (await this.workingTreeDiff());
    const { ctx } = this.owner;
    const { repo } = ctx;
    await refuseUnsafeChanges(ctx, patch, this.owner.policy, repo.root);
    const snapshot = ctx.snapshot.tree;
    // Made before the apply, so that the record is there as soon as the files are: the user's
    // edits are told apart from what was delivered by it (see workingTreeChanges), and a watcher
    // comparing the moment the files change must not take a partial delivery for the user's edit.
    // A diff taken from somewhere else that does not fit leaves the record as it was: its changes
    // are offered again, never lost.
    const tree =
      !patch.isEmpty && remember ? await treeWithPatch(ctx, deliveredTree(this.deliveredRecord, snapshot) ?? snapshot, patch.patchBytes) : undefined;
    const result = await applyPatch(
      ctx,
      {
        git: userRepoGit(repo.gitDir),
        workTree: repo.root,
        hostRoot: repo.root,
        label: `the working tree at ${repo.root}`,
      },
      patch,
    );
    if (tree !== undefined) {
      this.deliveredRecord = { snapshot, tree };
      // Diffs for the working tree start from what was delivered: those made before no longer hold.
      this.diffs.clear();
      await this.owner.save();
    }
    return result;
  }

  /** Kills its commands and deletes its storage; its children keep working. */
  async discard(): Promise<void> {
    if (this.discarded) return;
    let destroyed = false;
    await this.lock.exclusive(async () => {
      if (this.discarded) return;
      if (this.detached) throw this.detachedError();
      this.discarded = true;
      await this.stopCommands();
      await this.owner.unregister(this);
      await this.handle.destroy();
      destroyed = true;
    });
    if (destroyed) await this.owner.collectGarbage();
  }

  /**
   * @internal For a deleting close of its session: kills its commands and releases its processes
   * and mounts, and marks it discarded. Its storage goes with the session's, all at once.
   */
  async dispose(): Promise<void> {
    await this.lock.exclusive(async () => {
      if (this.discarded || this.detached) return;
      this.discarded = true;
      await this.stopCommands();
      await this.handle.release();
    });
  }

  /**
   * @internal For close({ keep }): kills its commands and releases its processes and mounts,
   * keeping its storage for a later resume. This object is unusable afterwards.
   */
  async detach(): Promise<void> {
    await this.lock.exclusive(async () => {
      if (this.discarded || this.detached) return;
      this.detached = true;
      await this.stopCommands();
      await this.handle.release();
    });
  }

  private async stopCommands(): Promise<void> {
    const running = [...this.running];
    for (const p of running) p.kill();
    await Promise.allSettled(running.map((p) => p.done));
  }

  private detachedError(): SandboxError {
    return new SandboxError(
      'discarded',
      `Sandbox ${this.id} belongs to a session that was closed and kept; resume that session ` +
        '(openSession with resume) to keep working in it.',
    );
  }

  /**
   * @internal Runs a file operation or command start under the shared lock. One that `changes`
   * the view counts as a change both before and after it (it may fail halfway, and a diff may be
   * made while it runs).
   */
  op<T>(fn: () => Promise<T>, opts: { changes?: boolean } = {}): Promise<T> {
    return this.lock.shared(async () => {
      if (this.discarded) {
        throw new SandboxError('discarded', `Sandbox ${this.id} was discarded; create a new sandbox to keep working.`);
      }
      if (this.detached) throw this.detachedError();
      if (!opts.changes) return fn();
      this.changed();
      try {
        return await fn();
      } finally {
        this.changed();
      }
    });
  }
}
