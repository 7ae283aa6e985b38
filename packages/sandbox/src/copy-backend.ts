import { spawn, type SpawnOptions } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type {
  BackendSandbox,
  BackendSession,
  BaseChange,
  CommandSpec,
  DiffSince,
  PreparedBase,
  ProbeOutcome,
  RestoredSandboxes,
  SandboxBackend,
  SavedSandbox,
  SessionContext,
  SpawnedCommand,
} from './backend.js';
import type { Snapshot } from './base-snapshot.js';
import { rebaseCopy } from './copy-rebase.js';
import { deltaNames } from './delta-layer.js';
import { copyTree, pathExists, removeTree } from './fs-util.js';
import { hostGit, text, withGitArgs, type GitRunner } from './git.js';
import { childStdio } from './inherited-fds.js';
import { tooLongInGitWarnings } from './long-paths.js';
import { addAllButNestedRepos } from './nested-repos.js';
import { EXCLUDE_PARTIAL_WRITES } from './partial-write.js';
import { bwrapUnavailable } from './bwrap-probe.js';
import { commandCgroup, scratchBytes } from './command-limits.js';
import { COMMAND_UID, commandUserFor, needsCommandUser } from './command-user.js';
import type { SessionContainment } from './containment.js';
import { proxyEnv } from './network-proxy.js';
import { NamespaceHolder } from './ns-holder.js';
import { killProcessesWithEnv } from './proc.js';
import { removeUnlisted } from './registry.js';
import { scrubGitConfig } from './git-config-scrub.js';
import { moveSandboxGit } from './sandbox-git-rebase.js';
import { HOOKS_DIR, seedSandboxGit } from './sandbox-git-seed.js';
import { sandboxViewIndex } from './sandbox-view-index.js';
import { inheritedEnv } from './secret-env.js';
import { applyToIndex, treeChanges } from './tree-changes.js';
import { diskUsage } from './storage-usage.js';
import { sealGit } from './trusted-git.js';

/**
 * How copy-backend commands are contained: 'confined' runs them in a holder's confined view like
 * the overlay backends (see ns-holder.ts); without bubblewrap they reach the whole machine, and
 * only their processes are contained, by a pid namespace or, failing that, an environment marker.
 */
export type CommandContainment = 'confined' | 'pid-namespace' | 'env-marker';

export interface CopyBackendOptions {
  /**
   * 'auto' (default): the confined view where bubblewrap works, else a pid namespace per command
   * where the kernel allows it, else the environment marker. 'env-marker' forces the last
   * (tests, diagnosis).
   */
  containment?: 'auto' | 'env-marker';
}

/**
 * argv prefix that runs a command as init of a new pid namespace with a /proc of its own: when
 * it exits, is cancelled, or this process dies (pdeathsig), the kernel kills everything it
 * started, daemons that left its process group included, and it sees no other process (so no
 * other process's environment). Unprivileged, a user namespace (same uid, no capabilities left
 * after exec) provides the pid namespace; as root, CAP_SYS_ADMIN is dropped so the command
 * cannot unmount its /proc to reach the host's.
 */
function pidNamespacePrefix(): string[] {
  const root = process.getuid?.() === 0;
  return [
    'setpriv',
    '--pdeathsig',
    'KILL',
    '--',
    'unshare',
    ...(root ? [] : ['--user', '--map-current-user']),
    '--pid',
    '--fork',
    '--kill-child',
    '--mount-proc',
    '--',
    ...(root ? ['setpriv', '--inh-caps=-sys_admin', '--bounding-set=-sys_admin', '--'] : []),
  ];
}

let pidNamespaceProbe: Promise<boolean> | undefined;

/** Whether pidNamespacePrefix() works here; asked once per process. */
function pidNamespacesWork(): Promise<boolean> {
  if (process.platform !== 'linux') return Promise.resolve(false);
  pidNamespaceProbe ??= (async () => {
    const [file, ...args] = pidNamespacePrefix();
    const child = spawn(file, [...args, '/bin/sh', '-c', 'test "$$" = 1'], { stdio: 'ignore', env: inheritedEnv() });
    try {
      const [code] = (await once(child, 'exit')) as [number | null];
      return code === 0;
    } catch {
      return false; // setpriv or unshare missing
    }
  })();
  return pidNamespaceProbe;
}

/** The variable that tags a command's processes when no pid namespace is available. */
const MARKER_VAR = 'INFINITY_SANDBOX_COMMAND';

/**
 * The portable backend: each sandbox is a full copy (a reflink clone where the filesystem can)
 * of its parent's tree at spawn, with a private `.git`. O(repository) to create, but it needs no
 * kernel features, so it works on macOS and in containers without user namespaces.
 */
export function makeCopyBackend(opts: CopyBackendOptions = {}): SandboxBackend {
  const containment = async (): Promise<CommandContainment> => {
    if (opts.containment === 'env-marker') return 'env-marker';
    if ((await bwrapUnavailable()) === undefined) return 'confined';
    return (await pidNamespacesWork()) ? 'pid-namespace' : 'env-marker';
  };
  return {
    name: 'copy',
    mountsAtRepoPath: false,
    async probe(): Promise<ProbeOutcome> {
      const mode = await containment();
      const how =
        mode === 'confined'
          ? 'confined by bubblewrap'
          : `NOT confined (${(await bwrapUnavailable()) ?? 'forced'}); their processes are contained by ${mode === 'pid-namespace' ? 'a pid namespace per command' : 'process groups and an environment marker'}`;
      return { ok: true, detail: `always available (plain copy, reflink clone where supported; commands ${how})` };
    },
    async open(ctx, confinement) {
      return new CopySession(ctx, await containment(), confinement);
    },
  };
}

export const copyBackend: SandboxBackend = makeCopyBackend();

// Copies get new inode numbers and ctimes; without this every diff would re-hash every file.
const STAT_CONFIG = ['-c', 'core.checkStat=minimal', '-c', 'core.trustctime=false'];

class CopySession implements BackendSession {
  constructor(
    private readonly ctx: SessionContext,
    private readonly containment: CommandContainment,
    private readonly confinement: SessionContainment,
  ) {}

  private sandbox(name: string): CopySandbox {
    return new CopySandbox(this.ctx, path.join(this.ctx.sessionDir, 'sandboxes', name), this.containment, this.confinement);
  }

  async createRoot(name: string): Promise<BackendSandbox> {
    const { baseDir, baseDirIndex, baseTree, snapshot } = this.ctx;
    const sb = this.sandbox(name);
    await mkdir(sb.treeDir, { recursive: true });
    await copyTree(baseDir, sb.treeDir);
    await copyFile(baseDirIndex, sb.diffIndex);
    if (snapshot.tree !== baseTree) {
      // The base is the snapshot taken at open; a refresh since then is checked out on top,
      // touching only the files that differ (and leaving their stat data in the diff index).
      await sealGit(hostGit, this.ctx.plumbingGitDir)([`--work-tree=${sb.treeDir}`, 'read-tree', '--reset', '-u', baseTree, snapshot.tree], {
        cwd: sb.treeDir,
        env: { ...this.ctx.objectEnv, GIT_INDEX_FILE: sb.diffIndex },
      });
    }
    for (const heavy of this.ctx.heavyDirs) {
      // Fixed when the session opened; the user may have deleted it since.
      if (!(await pathExists(path.join(this.ctx.repo.root, heavy)))) continue;
      const target = path.join(sb.treeDir, heavy);
      await mkdir(target, { recursive: true });
      await copyTree(path.join(this.ctx.repo.root, heavy), target);
    }
    // A folder without a repository has no .git, and its copies get none.
    if (!this.ctx.repo.folder) await this.writePrivateGitDir(sb.treeDir);
    sb.spawnTree = snapshot.tree;
    sb.baseBytes = await diskUsage([sb.treeDir]);
    return sb;
  }

  async spawnChild(parent: BackendSandbox, name: string): Promise<BackendSandbox> {
    const p = parent as CopySandbox;
    const sb = this.sandbox(name);
    await mkdir(sb.treeDir, { recursive: true });
    await copyTree(p.treeDir, sb.treeDir);
    await copyFile(p.diffIndex, sb.diffIndex);
    sb.spawnTree = await sb.currentTree();
    sb.baseBytes = await diskUsage([sb.treeDir]);
    return sb;
  }

  async collectGarbage(): Promise<void> {
    // Copies share nothing; each sandbox's storage goes with it.
  }

  // Files change under running commands, as if the user had edited the copy.
  readonly rebaseNeedsIdle = false;

  /** Only an index: copies take the new snapshot's files themselves (see rebase and createRoot). */
  async prepareBase(next: Snapshot, number: number): Promise<PreparedBase> {
    const { index } = deltaNames(number);
    const file = path.join(this.ctx.sessionDir, index);
    const partial = `${file}.partial`;
    await mkdir(path.dirname(file), { recursive: true });
    await copyFile(this.ctx.baseDirIndex, partial);
    try {
      await applyToIndex(this.ctx, partial, await treeChanges(this.ctx, this.ctx.baseTree, next.tree));
      await rename(partial, file);
    } finally {
      await rm(partial, { force: true });
      await rm(`${partial}.lock`, { force: true });
    }
    return { index };
  }

  /** What each sandbox's last rebase left overridden, so overridden() need not hash the copy again. */
  private readonly lastRebase = new WeakMap<CopySandbox, { change: BaseChange; overridden: string[] }>();

  async rebase(sandbox: BackendSandbox, change: BaseChange): Promise<void> {
    const sb = sandbox as CopySandbox;
    const done = await rebaseCopy(this.ctx, { treeDir: sb.treeDir, spawnTree: sb.spawnTree!, currentTree: () => sb.currentTree() }, change);
    sb.spawnTree = done.spawnTree;
    this.lastRebase.set(sb, { change, overridden: done.overridden });
    // A folder's copy has no git of ours to move (a .git a command made there is its own).
    if (!this.ctx.repo.folder) await moveSandboxGit(this.ctx, path.join(sb.treeDir, '.git'), change);
  }

  async overridden(sandbox: BackendSandbox, change: BaseChange): Promise<string[]> {
    const sb = sandbox as CopySandbox;
    const last = this.lastRebase.get(sb);
    if (last?.change === change) return last.overridden;
    const differs = new Set((await treeChanges(this.ctx, change.to.tree, await sb.currentTree())).map((c) => c.path));
    return change.changes.map((c) => c.path).filter((p) => differs.has(p));
  }

  /**
   * A copy is its directory plus the tree it was spawned on (an object in the session's store),
   * so nothing needs repair: copies a crash left unlisted are deleted (the registry names a copy
   * only once spawnChild has finished it). A copy damaged from outside is reported as lost.
   */
  async restore(saved: readonly SavedSandbox[]): Promise<RestoredSandboxes> {
    const sandboxes = new Map<string, BackendSandbox>();
    const lost = new Map<string, string>();
    for (const { name, state } of saved) {
      const spawnTree = (state as { spawnTree?: unknown } | undefined)?.spawnTree;
      const sb = this.sandbox(name);
      if (typeof spawnTree !== 'string' || !/^[0-9a-f]{40,64}$/.test(spawnTree)) {
        lost.set(name, 'its saved spawn tree is unreadable');
      } else if (!(await pathExists(sb.treeDir)) || !(await pathExists(sb.diffIndex))) {
        lost.set(name, 'its copy is missing');
      } else {
        sb.spawnTree = spawnTree;
        const baseBytes = (state as { baseBytes?: unknown }).baseBytes;
        if (typeof baseBytes === 'number') sb.baseBytes = baseBytes;
        sandboxes.set(name, sb);
      }
    }
    await removeUnlisted(path.join(this.ctx.sessionDir, 'sandboxes'), new Set(sandboxes.keys()));
    return { sandboxes, lost };
  }

  /**
   * A private git dir that borrows the user's objects through alternates: `git status`, `git
   * diff` and `git log` work in the copy as in the user's tree (see seedSandboxGit and
   * sandboxViewIndex) without ever writing into the user's repository.
   */
  private async writePrivateGitDir(treeDir: string): Promise<void> {
    const { repo, snapshot, objectsDir } = this.ctx;
    const view = sandboxViewIndex(this.ctx);
    const dotGit = path.join(treeDir, '.git');
    await mkdir(path.join(dotGit, 'objects', 'info'), { recursive: true });
    await mkdir(path.join(dotGit, 'info'), { recursive: true });
    const inherited = await readFile(path.join(repo.commonDir, 'objects', 'info', 'alternates'), 'utf8').catch(
      () => '',
    );
    const alternates = [path.join(repo.commonDir, 'objects'), objectsDir, ...inherited.split('\n')].filter(Boolean);
    await writeFile(path.join(dotGit, 'objects', 'info', 'alternates'), alternates.join('\n') + '\n');
    if (await pathExists(path.join(repo.commonDir, 'refs'))) {
      await mkdir(path.join(dotGit, 'refs'), { recursive: true });
      await copyTree(path.join(repo.commonDir, 'refs'), path.join(dotGit, 'refs'));
    } else {
      await mkdir(path.join(dotGit, 'refs'), { recursive: true });
    }
    for (const f of ['packed-refs', 'info/exclude']) {
      await copyFile(path.join(repo.commonDir, f), path.join(dotGit, f)).catch(() => undefined);
    }
    // Without the credentials a remote URL may hold (git-config-scrub.ts); a copy's files have
    // new inode numbers and ctimes (see STAT_CONFIG). Set last, so that they win.
    const config = scrubGitConfig(await readFile(path.join(repo.commonDir, 'config'), 'utf8'));
    const local = `${config}${config.endsWith('\n') || config === '' ? '' : '\n'}[core]\n\tbare = false\n\tcheckStat = minimal\n\ttrustctime = false\n`;
    // Relative to the top of the copy, where git runs hooks: a child's copy of this dir finds its own.
    seedSandboxGit(dotGit, snapshot, { config: local, hooksPath: path.posix.join('.git', HOOKS_DIR) });
    if (/worktree/i.test(config)) {
      await hostGit(['config', '--file', path.join(dotGit, 'config'), '--unset-all', 'core.worktree'], { okExitCodes: [5] });
    }
    await copyFile(await view, path.join(dotGit, 'index'));
  }
}

class CopySandbox implements BackendSandbox {
  readonly treeDir: string;
  readonly diffIndex: string;
  /** Tree of the view it was created on: what diff({ since: 'spawn' }) compares against. */
  spawnTree: string | undefined;
  /**
   * What the copy took on disk when it was made (storageBytes counts its growth since); measured
   * at the first storageBytes() for a copy saved before this was recorded.
   */
  baseBytes: number | undefined;
  private holder: NamespaceHolder | undefined;
  private starting: Promise<NamespaceHolder> | undefined;

  constructor(
    private readonly ctx: SessionContext,
    readonly dir: string,
    private readonly containment: CommandContainment,
    private readonly confinement: SessionContainment,
  ) {
    this.treeDir = path.join(dir, 'tree');
    this.diffIndex = path.join(dir, 'diff.index');
  }

  get commandRoot(): string {
    return this.treeDir;
  }

  get viewOwner(): number | undefined {
    return this.contained && needsCommandUser() ? COMMAND_UID : undefined;
  }

  get contained(): boolean {
    return this.containment === 'confined';
  }

  /** Confined: a holder whose view has the copy writable and the rest of the machine read-only. */
  private ensureHolder(): Promise<NamespaceHolder> {
    if (this.holder?.alive) return Promise.resolve(this.holder);
    this.starting ??= this.startHolder().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startHolder(): Promise<NamespaceHolder> {
    const { repo, objectsDir, tmpDir } = this.ctx;
    const c = this.confinement;
    // As root, commands run as the command user, who must own the copy and the user's writable
    // paths, and read the repository (the copy's git reads its objects) and what the user lets
    // them (toolchains, `readable`), whatever root's modes there.
    const commandUser = await commandUserFor(
      [this.dir, this.treeDir, objectsDir, tmpDir, ...c.writable],
      [...(repo.folder ? [repo.root] : [repo.root, repo.commonDir]), ...(c.covered?.keep ?? [])],
    );
    this.holder = await NamespaceHolder.start(
      {
        view: {
          userns: process.getuid?.() !== 0,
          stateDir: c.stateDir,
          hidden: c.hidden,
          covered: c.covered,
          // A folder's private git dir stays covered with the state dir: nothing here reads it.
          readOnly: repo.folder ? [repo.root] : [...new Set([repo.root, repo.commonDir])],
          // Our git in the view reads the session's own git dir.
          storageReadOnly: [this.ctx.plumbingGitDir],
          // The copy (and its diff index) for commands and our git; the object store and scratch
          // dir for our git only (commandReadOnly, commandHidden).
          programPaths: c.programPaths,
          extraWritable: c.writable,
          // The copy a mount of its own: a mount point cannot be renamed, so no command can put
          // a symlink where this process (rebase, the sandbox's git state) finds the copy.
          writable: [this.dir, this.treeDir, objectsDir, tmpDir],
          network: c.network === 'on',
          scratchBytes: scratchBytes(c.limits),
          ...(commandUser ? { commandUid: commandUser.uid } : {}),
        },
        ...(commandUser ? { commandUser } : {}),
        cwd: this.dir,
        commandReadOnly: [objectsDir, this.diffIndex],
        commandHidden: [tmpDir],
        anchors: [this.treeDir],
        ...(c.proxySocket ? { proxySocket: c.proxySocket } : {}),
      },
      path.join(this.dir, 'holder.json'),
    );
    return this.holder;
  }

  async viewRoot(): Promise<string> {
    return this.contained ? (await this.ensureHolder()).hostPath(this.treeDir) : this.treeDir;
  }

  async git(): Promise<GitRunner> {
    return this.contained ? (await this.ensureHolder()).git() : hostGit;
  }

  /**
   * In a pid namespace of its own where possible (see pidNamespacePrefix). Otherwise the command's
   * environment carries a unique marker, and whatever still carries it when the command ends or
   * is cancelled is killed: that catches daemons that left the process group (setsid), unless
   * they also cleared their environment.
   */
  async spawn(spec: CommandSpec): Promise<SpawnedCommand> {
    if (this.containment === 'confined') {
      const holder = await this.ensureHolder();
      const { limits } = this.confinement;
      const cgroup = await commandCgroup(limits);
      const [file, ...args] = holder.commandArgv({
        wd: path.join(this.treeDir, spec.cwd),
        command: spec.command,
        limits: spec.noFileGrowth ? { ...limits, fileSizeBytes: 0 } : limits,
        cgroup,
        network: spec.network ?? false,
      });
      const env = this.confinement.proxySocket && !spec.network ? { ...spec.env, ...proxyEnv() } : spec.env;
      const child = spawn(file, args, { env, detached: true, stdio: childStdio([spec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe']) });
      return { child, namespaceInit: true, initDepth: 2, ...(cgroup ? { reap: () => cgroup.remove() } : {}) };
    }
    const opts: SpawnOptions = { cwd: path.join(this.treeDir, spec.cwd), detached: true, stdio: childStdio([spec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe']) };
    if (this.containment === 'pid-namespace') {
      const [file, ...args] = pidNamespacePrefix();
      return { child: spawn(file, [...args, '/bin/sh', '-c', spec.command], { ...opts, env: spec.env }), namespaceInit: true };
    }
    const id = randomUUID();
    const env = { ...spec.env, [MARKER_VAR]: id };
    return {
      child: spawn('/bin/sh', ['-c', spec.command], { ...opts, env }),
      reap: () => killProcessesWithEnv(`${MARKER_VAR}=${id}`),
    };
  }

  get diskLimitBytes(): number {
    return this.confinement.limits.diskBytes;
  }

  /**
   * How much the copy grew since it was made. Measured as root of the holder's user namespace
   * while the holder runs (a directory a command made unreadable is counted too); never starts one.
   */
  async storageBytes(): Promise<number> {
    const holder = this.holder?.alive ? this.holder : undefined;
    const now = await diskUsage([this.treeDir], holder?.ownerArgv());
    this.baseBytes ??= now;
    return Math.max(0, now - this.baseBytes);
  }

  /** Nested repositories the last currentTree() left out. */
  private nestedRepos: string[] = [];
  /** Paths too long for the last currentTree() to read (see long-paths.ts). */
  private tooLong: string[] = [];

  /**
   * Tree of the copy as it is now; the private diff index keeps this O(changed files) to hash.
   * With the session's own git dir: the copy's `.git` is the commands' to configure.
   */
  async currentTree(): Promise<string> {
    // In the confined view when there is one: a symlink swapped mid-hash leads only where commands reach.
    const sealed = sealGit(await this.git(), this.ctx.plumbingGitDir);
    const env = { ...this.ctx.objectEnv, GIT_INDEX_FILE: this.diffIndex };
    const base = [...STAT_CONFIG, `--work-tree=${this.treeDir}`];
    const git: GitRunner = (args, opts = {}) => {
      const [all, o] = withGitArgs(base, args, opts);
      return sealed(all, { ...o, cwd: this.treeDir, env });
    };
    const added = await addAllButNestedRepos(git, ['.', EXCLUDE_PARTIAL_WRITES]);
    this.nestedRepos = added.repos;
    this.tooLong = tooLongInGitWarnings(added.stderr);
    return text(await git(['write-tree'], { env }));
  }

  async changeTrees(since: DiffSince): Promise<{ from: string; to: string; nestedRepos: string[]; tooLong: string[] }> {
    const from = since === 'snapshot' ? this.ctx.snapshot.tree : this.spawnTree!;
    return { from, to: await this.currentTree(), nestedRepos: this.nestedRepos, tooLong: this.tooLong };
  }

  async release(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const h = this.holder;
    this.holder = undefined;
    await h?.stop();
  }

  saveState(): unknown {
    return { spawnTree: this.spawnTree, ...(this.baseBytes !== undefined ? { baseBytes: this.baseBytes } : {}) };
  }

  async destroy(): Promise<void> {
    await this.release();
    await removeTree(this.dir);
  }
}
