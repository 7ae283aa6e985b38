import { spawn } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { copyFile, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type {
  BackendName,
  BackendSandbox,
  BackendSession,
  BaseChange,
  CommandSpec,
  DiffSince,
  PreparedBase,
  RestoredSandboxes,
  SandboxBackend,
  SavedSandbox,
  SessionContext,
  SpawnedCommand,
} from './backend.js';
import type { Snapshot } from './base-snapshot.js';
import { buildDeltaLayer, deltaNames } from './delta-layer.js';
import { removeTree } from './fs-util.js';
import type { GitRunner } from './git.js';
import { changedFiles, sameEntry } from './layer-changes.js';
import { nestedRepoDirs } from './nested-repos.js';
import {
  childStack,
  copyUpper,
  dropUnusedLayers,
  EMPTY_STACK,
  freezeUpper,
  META_LAYER,
  mergedLowers,
  restoreStacks,
  snapshotLowers,
  spawnLowers,
  type LayerStack,
} from './layer-stack.js';
import { commandCgroup, scratchBytes } from './command-limits.js';
import { COMMAND_UID, commandUserFor } from './command-user.js';
import type { SessionContainment } from './containment.js';
import { proxyEnv } from './network-proxy.js';
import { childStdio } from './inherited-fds.js';
import { NamespaceHolder } from './ns-holder.js';
import { overlaySetup, REAL_OBJECTS_DIR, SNAPSHOT_VIEW_DIR, type OverlayMode } from './overlay-mounts.js';
import { probeOverlay } from './overlay-probe.js';
import { isPartialWrite } from './partial-write.js';
import { diskUsage } from './storage-usage.js';
import { removeUnlisted } from './registry.js';
import { RwLock } from './rw-lock.js';
import { scrubGitConfig } from './git-config-scrub.js';
import { moveSandboxGit } from './sandbox-git-rebase.js';
import { HOOKS_DIR, seedSandboxGit } from './sandbox-git-seed.js';
import { sandboxViewIndex } from './sandbox-view-index.js';
import { sealGit } from './trusted-git.js';
import { fsPath } from './utf8-names.js';
import { buildTrees } from './view-trees.js';
import { stampUpper, type ViewStamp } from './view-stamp.js';

function overlayBackend(mode: OverlayMode): SandboxBackend {
  const name: BackendName = mode === 'userns' ? 'overlay-userns' : 'overlay-root';
  return {
    name,
    mountsAtRepoPath: true,
    probe: (scratch) => probeOverlay(mode, scratch),
    open(ctx, containment) {
      try {
        const session = new OverlaySession(ctx, mode, containment);
        session.prepare();
        return Promise.resolve(session);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}

/** Kernel overlayfs in an unprivileged user + mount + pid namespace. */
export const overlayUsernsBackend = overlayBackend('userns');
/** Kernel overlayfs in a private mount + pid namespace, for when we run as root. */
export const overlayRootBackend = overlayBackend('root');

class OverlaySession implements BackendSession {
  /** Serialises layer renames and copies against layer garbage collection. */
  private readonly layersLock = new RwLock();
  private layerCounter = 0;
  /**
   * Every sandbox whose storage exists, from the moment its stack is decided (under layersLock,
   * before any caller knows of it) until it is destroyed: what garbage collection keeps layers
   * for. The session's own list is not enough: a child being created is in neither it nor the
   * registry yet, and a discard finishing meanwhile must not collect the layer it stacks on.
   */
  private readonly live = new Set<OverlaySandbox>();

  constructor(
    readonly ctx: SessionContext,
    readonly mode: OverlayMode,
    readonly containment: SessionContainment,
  ) {}

  /**
   * The meta layer sits just above the base and holds only empty directories: mount points for
   * the private .git and node_modules overlays (a bind mount inside a lower layer is not
   * followed by overlay, so they are mounted on top of the merged view).
   */
  prepare(): void {
    // Synchronous (empty directories): see makeDirs.
    const meta = path.join(this.ctx.sessionDir, META_LAYER);
    mkdirSync(meta, { recursive: true });
    // A folder without a repository has no .git, and its sandboxes show none.
    if (!this.ctx.repo.folder) mkdirSync(path.join(meta, '.git'), { recursive: true });
    for (const d of this.ctx.heavyDirs) mkdirSync(path.join(meta, d), { recursive: true });
  }

  async createRoot(name: string): Promise<BackendSandbox> {
    // No layers to protect: tracking it needs no lock.
    return this.finishSandbox(this.track(name, EMPTY_STACK));
  }

  async spawnChild(parent: BackendSandbox, name: string, opts: { parentBusy: boolean }): Promise<BackendSandbox> {
    const p = parent as OverlaySandbox;
    // The layer the child stacks on and the child's place in `live` are made in one critical
    // section: garbage collection sees either neither or both.
    const sb = await this.layersLock.exclusive(async () => {
      if ((await readdir(p.upperDir)).length === 0) return this.track(name, childStack(p.stack));
      const n = ++this.layerCounter;
      if (opts.parentBusy) {
        // Freezing remounts the parent, which would kill its running commands. Copy its upper
        // instead (whiteouts and opaque xattrs included): O(its changes), and only the child
        // stacks on the copy.
        const copy = await copyUpper(this.ctx.sessionDir, p.upperDir, `c${n}`);
        return this.track(name, { frozen: [copy, ...p.stack.frozen], own: 0 });
      }
      // Named after its sandbox, so a restart can tell whose layer a crash left unrecorded.
      const layerId = `${p.name}.${n}`;
      await p.release();
      p.stack = await freezeUpper(this.ctx.sessionDir, p.upperDir, p.workDir, p.stack, layerId);
      return this.track(name, childStack(p.stack));
    });
    return this.finishSandbox(sb);
  }

  /** Frees the layers no sandbox of this session stacks on, counting those still being created. */
  async collectGarbage(): Promise<void> {
    await this.layersLock.exclusive(() =>
      dropUnusedLayers(
        this.ctx.sessionDir,
        [...this.live].map((s) => s.stack),
      ),
    );
  }

  /**
   * Sandboxes come back with their saved stacks; a layer a crash froze before the registry
   * recorded it is put back on top of its sandbox (see restoreStacks). Holders start on first use.
   */
  async restore(saved: readonly SavedSandbox[]): Promise<RestoredSandboxes> {
    return this.layersLock.exclusive(async () => {
      const { stacks, lost, maxLayerNumber } = await restoreStacks(saved, this.ctx.sessionDir);
      this.layerCounter = Math.max(this.layerCounter, maxLayerNumber);
      const sandboxes = new Map<string, BackendSandbox>();
      for (const [name, stack] of stacks) {
        const sb = this.track(name, stack);
        // A crash between freezing an upper and making its replacement leaves no upper.
        this.makeDirs(sb);
        sandboxes.set(name, sb);
      }
      await dropUnusedLayers(this.ctx.sessionDir, [...stacks.values()]);
      await removeUnlisted(path.join(this.ctx.sessionDir, 'sandboxes'), new Set(stacks.keys()));
      return { sandboxes, lost };
    });
  }

  // A sandbox's view is remounted onto the new layers, which its running commands would not survive.
  readonly rebaseNeedsIdle = true;

  async prepareBase(next: Snapshot, number: number): Promise<PreparedBase> {
    const names = deltaNames(number);
    await buildDeltaLayer(this.ctx, this.mode, next.tree, names);
    return names;
  }

  /**
   * The delta layer is the session's: the context already names the new one, so the sandbox
   * only needs its mounts dropped (the next use mounts the new stack) and its private git moved.
   */
  async rebase(sandbox: BackendSandbox, change: BaseChange): Promise<void> {
    const sb = sandbox as OverlaySandbox;
    await sb.release();
    if (!this.ctx.repo.folder) await moveSandboxGit(this.ctx, path.join(sb.dir, 'git', 'upper'), change);
  }

  async overridden(sandbox: BackendSandbox, change: BaseChange): Promise<string[]> {
    return (sandbox as OverlaySandbox).hiddenChanges(change.changes.map((c) => c.path));
  }

  /**
   * A sandbox object, already in `live`. Call it in the critical section (under layersLock) that
   * made the layers it stacks on, so garbage collection never sees those layers unclaimed.
   */
  private track(name: string, stack: LayerStack): OverlaySandbox {
    const sb = new OverlaySandbox(this.ctx, this.mode, this.containment, name, stack, (gone) => this.live.delete(gone));
    this.live.add(sb);
    return sb;
  }

  /** Makes a tracked sandbox's directories; on failure it is destroyed (and untracked) again. */
  private async finishSandbox(sb: OverlaySandbox): Promise<OverlaySandbox> {
    try {
      this.makeDirs(sb);
      await this.seedGitUpper(path.join(sb.dir, 'git', 'upper'));
      // A new sandbox is made to be worked in at once (a session's root, a child at its spawn):
      // its mounts start now, beside the thread's next model request, instead of at its first
      // tool call. A failure here is met again, and reported, at first use.
      sb.warm();
      return sb;
    } catch (err) {
      await sb.destroy().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Synchronous, like the rest of what a new sandbox writes before its holder starts (empty
   * directories, small files): a session's first tool call waits for that holder, and each
   * asynchronous call would wait its turn in an event loop kept busy at start-up (see
   * writeJsonAtomic in registry.ts).
   */
  private makeDirs(sb: OverlaySandbox): void {
    const dirs = ['upper', 'work', 'lv', SNAPSHOT_VIEW_DIR, 'git/upper/objects/info', 'git/work', 'stage/git', REAL_OBJECTS_DIR];
    this.ctx.heavyDirs.forEach((_, i) => dirs.push(`nm${i}/upper`, `nm${i}/work`, `stage/nm${i}`));
    for (const d of dirs) mkdirSync(path.join(sb.dir, d), { recursive: true });
  }

  /**
   * The sandbox's private .git overlay starts where the user's HEAD was at the snapshot, with the
   * user's changes since uncommitted (see seedSandboxGit and sandboxViewIndex, whose stat data
   * keeps `git status` fast), the hooks that refuse commits, and the session's objects reachable.
   * Commits, index writes and ref updates made by commands stay in this upper.
   */
  private async seedGitUpper(upper: string): Promise<void> {
    const { repo, snapshot, objectsDir } = this.ctx;
    if (repo.folder) return;
    const view = await sandboxViewIndex(this.ctx);
    // Synchronous: see makeDirs.
    // git replaces an index by lock file + rename, never in place, so a hard link is safe and
    // keeps creation O(1) (a 50k-file index is ~5 MB).
    try {
      linkSync(view, path.join(upper, 'index'));
    } catch {
      await copyFile(view, path.join(upper, 'index'));
    }
    let inherited = '';
    try {
      inherited = readFileSync(path.join(repo.commonDir, 'objects', 'info', 'alternates'), 'utf8');
    } catch {
      // The user's repository borrows no objects.
    }
    writeFileSync(path.join(upper, 'objects', 'info', 'alternates'), [...inherited.split('\n').filter(Boolean), objectsDir].join('\n') + '\n');
    // Over the user's config in the view: without credentials (git-config-scrub.ts), with the hooks.
    let worktreeConfig: string | undefined;
    try {
      worktreeConfig = readFileSync(path.join(repo.gitDir, 'config.worktree'), 'utf8');
    } catch {
      // None: git reads only the config.
    }
    seedSandboxGit(upper, snapshot, {
      config: scrubGitConfig(readFileSync(path.join(repo.commonDir, 'config'), 'utf8')),
      ...(worktreeConfig !== undefined ? { worktreeConfig: scrubGitConfig(worktreeConfig) } : {}),
      // Where commands see this upper: over the repository's .git.
      hooksPath: path.join(repo.root, '.git', HOOKS_DIR),
    });
  }
}

class OverlaySandbox implements BackendSandbox {
  readonly dir: string;
  readonly upperDir: string;
  readonly workDir: string;
  private readonly rel: string;
  private holder: NamespaceHolder | undefined;
  private starting: Promise<NamespaceHolder> | undefined;

  constructor(
    private readonly ctx: SessionContext,
    private readonly mode: OverlayMode,
    private readonly containment: SessionContainment,
    readonly name: string,
    public stack: LayerStack,
    /** Tells the session this sandbox's storage is gone (its layers may be collected). */
    private readonly onDestroyed: (sb: OverlaySandbox) => void,
  ) {
    this.rel = `sandboxes/${name}`;
    this.dir = path.join(ctx.sessionDir, this.rel);
    this.upperDir = path.join(this.dir, 'upper');
    this.workDir = path.join(this.dir, 'work');
  }

  get commandRoot(): string {
    return this.ctx.repo.root;
  }

  get viewOwner(): number | undefined {
    return this.mode === 'root' ? COMMAND_UID : undefined;
  }

  // The holder's namespace is the confined view (see ns-holder.ts); every command runs in it.
  readonly contained = true;

  /** Starts the holder in the background (see finishSandbox). */
  warm(): void {
    this.ensureHolder().catch(() => undefined);
  }

  /** Mounts lazily; a holder that died (e.g. killed from outside) is replaced. */
  private ensureHolder(): Promise<NamespaceHolder> {
    if (this.holder?.alive) return Promise.resolve(this.holder);
    this.starting ??= this.mount().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async mount(): Promise<NamespaceHolder> {
    // A volatile overlay refuses a work dir that was used before; work dirs hold no data.
    // Synchronous (nearly empty directories), see OverlaySession.makeDirs. The kernel leaves a
    // used work dir's work/work with mode 000, which root may remove anyway; anyone else gets
    // removeTree's slower path.
    const workDirs = ['work', 'git/work', ...this.ctx.heavyDirs.map((_, i) => `nm${i}/work`)];
    for (const w of workDirs) {
      const dir = path.join(this.dir, w);
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        await removeTree(dir);
      }
      mkdirSync(dir);
    }
    // Sandboxes of sessions kept before these mount points existed get them here.
    mkdirSync(path.join(this.dir, REAL_OBJECTS_DIR), { recursive: true });
    mkdirSync(path.join(this.dir, SNAPSHOT_VIEW_DIR), { recursive: true });
    const { sessionDir, repo } = this.ctx;
    const realObjects = path.join(repo.commonDir, 'objects');
    // As root, commands run as the command user, who must own the layers' files and the user's
    // writable paths: the repository (the lowest layer), its git dir and the session's storage;
    // and read what the user lets them (toolchains, `readable`), whatever root's modes there.
    const { writable, covered } = this.containment;
    const commandUser =
      this.mode === 'root'
        ? await commandUserFor([repo.root, ...(repo.folder ? [] : [repo.commonDir]), sessionDir, ...writable], covered?.keep)
        : undefined;
    this.holder = await NamespaceHolder.start(
      {
        view: {
          userns: this.mode === 'userns',
          stateDir: this.containment.stateDir,
          hidden: this.containment.hidden,
          covered: this.containment.covered,
          // Put back what /tmp or the state dir may cover: the mount point and the lowers. A
          // folder's private git dir stays covered with the state dir: nothing here reads it.
          readOnly: repo.folder ? [repo.root] : [...new Set([repo.root, repo.commonDir])],
          programPaths: this.containment.programPaths,
          extraWritable: this.containment.writable,
          writable: [sessionDir],
          network: this.containment.network === 'on',
          scratchBytes: scratchBytes(this.containment.limits),
          ...(commandUser ? { commandUid: commandUser.uid } : {}),
        },
        ...(commandUser ? { commandUser } : {}),
        setup: overlaySetup(this.mode, {
          sessionDir,
          sandboxRel: this.rel,
          repoRoot: repo.root,
          lowers: mergedLowers(this.stack, this.ctx.deltaLayer),
          spawnLowers: spawnLowers(this.stack, this.ctx.deltaLayer),
          snapshotLowers: snapshotLowers(this.ctx.deltaLayer),
          heavyDirs: this.ctx.heavyDirs,
          realObjects,
          ...(repo.folder ? { folder: true } : {}),
        }),
        cwd: sessionDir,
        commandReadOnly: [this.ctx.objectsDir],
        commandHidden: [this.ctx.tmpDir],
        // Everything hostPath is asked for (viewRoot, changeTrees, hiddenChanges).
        anchors: [repo.root, path.join(this.dir, 'lv'), this.snapshotView()],
        ...(this.containment.proxySocket ? { proxySocket: this.containment.proxySocket } : {}),
      },
      path.join(this.dir, 'holder.json'),
    );
    return this.holder;
  }

  async viewRoot(): Promise<string> {
    return (await this.ensureHolder()).hostPath(this.ctx.repo.root);
  }

  async git(): Promise<GitRunner> {
    return this.nsGit(await this.ensureHolder());
  }

  /**
   * git in the namespace (see NamespaceHolder.git). An alternate naming the user's object
   * directory is pointed at its read-only bind: at its own path the namespace has the sandbox's
   * .git overlay, and git would skip writing objects (the blobs of a commit made in the sandbox)
   * that the host, which diffs the trees, cannot see.
   */
  private nsGit(holder: NamespaceHolder): GitRunner {
    const run = holder.git();
    const realObjects = path.resolve(this.ctx.repo.commonDir, 'objects');
    const inNs = path.join(this.dir, REAL_OBJECTS_DIR);
    return (args, opts = {}) => {
      const alt = opts.env?.GIT_ALTERNATE_OBJECT_DIRECTORIES;
      if (alt === undefined) return run(args, opts);
      const mapped = alt
        .split(':')
        .map((d) => (path.resolve(d) === realObjects ? inNs : d))
        .join(':');
      return run(args, { ...opts, env: { ...opts.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: mapped } });
    };
  }

  async spawn(spec: CommandSpec): Promise<SpawnedCommand> {
    const holder = await this.ensureHolder();
    const { limits } = this.containment;
    const cgroup = await commandCgroup(limits);
    const [file, ...args] = holder.commandArgv({
      wd: path.join(this.ctx.repo.root, spec.cwd),
      command: spec.command,
      limits: spec.noFileGrowth ? { ...limits, fileSizeBytes: 0 } : limits,
      cgroup,
      network: spec.network ?? false,
    });
    const env = this.containment.proxySocket && !spec.network ? { ...spec.env, ...proxyEnv() } : spec.env;
    const child = spawn(file, args, { env, detached: true, stdio: childStdio([spec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe']) });
    return { child, namespaceInit: true, initDepth: 2, ...(cgroup ? { reap: () => cgroup.remove() } : {}) };
  }

  get diskLimitBytes(): number {
    return this.containment.limits.diskBytes;
  }

  /**
   * Its uppers and the layers frozen from it: everything it wrote, and nothing it shares with
   * its parent or the base. Measured as root of the holder's user namespace while the holder runs
   * (a directory a command made unreadable is counted too); never starts one.
   */
  storageBytes(): Promise<number> {
    const uppers = ['upper', 'git/upper', ...this.ctx.heavyDirs.map((_, i) => `nm${i}/upper`)].map((u) => path.join(this.dir, u));
    const frozen = this.stack.frozen.slice(0, this.stack.own).map((l) => path.join(this.ctx.sessionDir, l));
    const holder = this.holder?.alive ? this.holder : undefined;
    return diskUsage([...uppers, ...frozen], holder?.ownerArgv());
  }

  async viewStamp(since?: ViewStamp): Promise<ViewStamp | undefined> {
    const holder = await this.ensureHolder();
    return stampUpper(this.upperDir, holder.hostPath(this.ctx.repo.root), since);
  }

  async changeTrees(since: DiffSince): Promise<{ from: string; to: string; nestedRepos: string[]; tooLong: string[] }> {
    const holder = await this.ensureHolder();
    const { sessionDir, repo, heavyDirs } = this.ctx;
    const ownFrozen = since === 'snapshot' ? this.stack.frozen : this.stack.frozen.slice(0, this.stack.own);
    const lowerInNs = since === 'snapshot' ? this.snapshotView() : path.join(this.dir, 'lv');
    const excluded = (rel: string): boolean =>
      rel === '.git' ||
      rel.startsWith('.git/') ||
      heavyDirs.some((d) => rel === d || rel.startsWith(`${d}/`)) ||
      isPartialWrite(rel);
    const tooLong = new Set<string>();
    const paths = await changedFiles({
      ownLayers: [this.upperDir, ...ownFrozen.map((l) => path.join(sessionDir, l))],
      lower: holder.hostPath(lowerInNs),
      merged: holder.hostPath(repo.root),
      excluded,
      tooLong: (p) => tooLong.add(p),
    });
    // Inside the namespace `<repo>/.git` is the sandbox's own, which commands configure: the
    // session's git dir is named instead, and no other config is read. Paths inside a nested
    // repository's .git never reach a tree (git refuses them): named here.
    const trees = await buildTrees(this.ctx, sealGit(this.nsGit(holder), this.ctx.plumbingGitDir), paths, lowerInNs, repo.root, {
      lower: holder.hostPath(lowerInNs),
      merged: holder.hostPath(repo.root),
    });
    return { ...trees, nestedRepos: nestedRepoDirs(paths), tooLong: [...tooLong] };
  }

  /**
   * Where, inside the namespace, the session's current snapshot is seen: the base itself, or
   * once it was refreshed, the read-only mount of the delta over it.
   */
  private snapshotView(): string {
    return this.ctx.deltaLayer ? path.join(this.dir, SNAPSHOT_VIEW_DIR) : this.ctx.baseDir;
  }

  /**
   * Of `paths`, those where this sandbox does not see the session's current snapshot. Only a
   * path that one of its own or inherited layers holds, or holds a parent directory of, can be
   * hidden (by a file, a whiteout or an opaque directory); only those are compared through the
   * mount, so a sandbox that never touched the neighbourhood costs a few lstat calls.
   */
  async hiddenChanges(paths: readonly string[]): Promise<string[]> {
    const layers = [this.upperDir, ...this.stack.frozen.map((l) => path.join(this.ctx.sessionDir, l))];
    const inLayers = async (rel: string): Promise<boolean> => {
      const names = [rel];
      for (let d = path.posix.dirname(rel); d !== '.'; d = path.posix.dirname(d)) names.push(d);
      for (const layer of layers) {
        for (const n of names) if (await lstat(fsPath(layer, n)).catch(() => undefined)) return true;
      }
      return false;
    };
    const candidates: string[] = [];
    for (const p of paths) if (await inLayers(p)) candidates.push(p);
    if (candidates.length === 0) return [];
    const holder = await this.ensureHolder();
    const merged = holder.hostPath(this.ctx.repo.root);
    const snapshot = holder.hostPath(this.snapshotView());
    const hidden: string[] = [];
    for (const p of candidates) if (!(await sameEntry(fsPath(merged, p), fsPath(snapshot, p)))) hidden.push(p);
    return hidden;
  }

  async release(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const h = this.holder;
    this.holder = undefined;
    await h?.stop();
  }

  async destroy(): Promise<void> {
    await this.release();
    await removeTree(this.dir);
    this.onDestroyed(this);
  }

  saveState(): unknown {
    return { frozen: [...this.stack.frozen], own: this.stack.own };
  }
}
