import type { ChildProcess } from 'node:child_process';
import type { Snapshot } from './base-snapshot.js';
import type { SessionContainment } from './containment.js';
import type { Containment } from './exec.js';
import type { GitRunner } from './git.js';
import type { RepoInfo } from './repo.js';
import type { TreeChange } from './tree-changes.js';
import type { ViewStamp } from './view-stamp.js';

export type BackendName = 'overlay-userns' | 'overlay-root' | 'copy';

/**
 * Everything a backend needs to know about the session it serves. The base parts (`snapshot`,
 * `baseIndex`, `deltaLayer`) change when the base is refreshed, and only while every sandbox of
 * the session is held exclusively (see SandboxSession.refreshBase): read them when used, never
 * keep a copy.
 */
export interface SessionContext {
  readonly sessionId: string;
  readonly sessionDir: string;
  readonly repo: RepoInfo;
  /** The snapshot diffs compare against: the one taken at open, or the latest refresh's. */
  snapshot: Snapshot;
  /** The snapshot taken at open, checked out (outside the repository) as `baseDir`; it never changes. */
  readonly baseDir: string;
  /** Tree that `baseDir` holds. */
  readonly baseTree: string;
  /** Index of `baseDir` with fresh stat data. */
  readonly baseDirIndex: string;
  /** Index of `snapshot` (stat data as fresh as the backend can make it); sandboxes copy it. */
  baseIndex: string;
  /**
   * Overlay backends: the layer (session-relative) that turns `baseDir` into `snapshot`, between
   * the base and every sandbox's own layers; undefined until the base is first refreshed.
   */
  deltaLayer: string | undefined;
  /** Session object store (the user's objects are its alternate). */
  readonly objectsDir: string;
  /** Scratch space for temporary indexes and patch files. */
  readonly tmpDir: string;
  /** Ignored `node_modules` directories (repo-relative) shared into sandboxes. */
  readonly heavyDirs: readonly string[];
  /** Env that routes new objects into the session store. */
  readonly objectEnv: Readonly<Record<string, string>>;
  /**
   * The session's own git dir (see plumbing-git-dir.ts): the only one git may use over sandbox
   * content, through sealGit (trusted-git.ts).
   */
  readonly plumbingGitDir: string;
}

/** The snapshot sandboxes are being moved from and to by a base refresh. */
export interface BaseChange {
  from: Snapshot;
  to: Snapshot;
  /** Every path (file, symlink) that differs between the two snapshots, as `to` has it. */
  changes: readonly TreeChange[];
}

/** The files of a refreshed base, session-relative; nothing refers to them until the session records them. */
export interface PreparedBase {
  /** Index of the new snapshot. */
  index: string;
  /** Overlay backends: the delta layer from `baseTree` to the new snapshot. */
  layer?: string;
}

export type DiffSince = 'spawn' | 'snapshot';

/** A started command, and how it is contained beyond its process group (see Containment). */
export interface SpawnedCommand extends Containment {
  /** Leader of a new process group. */
  child: ChildProcess;
}

export interface CommandSpec {
  command: string;
  /** Repo-relative working directory. */
  cwd: string;
  env: Record<string, string>;
  /** The machine's network for this command even when the sandbox has none (see ExecOptions.network). */
  network?: boolean;
  /** A pipe for standard input instead of /dev/null (see ExecOptions.stdin). */
  stdin?: boolean;
  /** The sandbox's storage is over its disk limit: no file may grow (RLIMIT_FSIZE 0), see disk-watch.ts. */
  noFileGrowth?: boolean;
}

/** One sandbox as a backend sees it. Callers serialise structural changes (see Sandbox). */
export interface BackendSandbox {
  /** Storage directory of this sandbox. */
  readonly dir: string;
  /** Where commands see the merged view: the repository's own path on overlay backends. */
  readonly commandRoot: string;
  /** True when its commands run contained (see Sandbox.contained). */
  readonly contained: boolean;
  /** Host path through which this process reads and writes the merged view. */
  viewRoot(): Promise<string>;
  /**
   * The uid (and gid) commands run as when that is not this process's own (see command-user.ts):
   * what this process creates in the view is given to it, as commands must be able to change it.
   */
  readonly viewOwner: number | undefined;
  /**
   * git that sees the merged view at `commandRoot` (inside the namespace on overlay: from here
   * the view is reachable only under /proc/<pid>/root, which git, resolving its work tree's real
   * path, would turn into the user's own tree). It binds no git dir and trusts no config: wrap it
   * with sealGit (trusted-git.ts) before use.
   */
  git(): Promise<GitRunner>;
  /** Starts a shell command in the merged view, as leader of a new process group. */
  spawn(spec: CommandSpec): Promise<SpawnedCommand>;
  /**
   * Trees before and after this sandbox's own changes (or all changes since the snapshot), the
   * directories holding a nested git repository met on the way, and the paths too long to be
   * read (see long-paths.ts, reported as tooLongPrefix gives them): neither tree has their files.
   */
  changeTrees(since: DiffSince): Promise<{ from: string; to: string; nestedRepos?: readonly string[]; tooLong?: readonly string[] }>;
  /**
   * Bytes of disk this sandbox's own storage takes now: what its commands and writes added (its
   * upper layers, or its copy's growth), not what it shares with the base or its parent. Weighed
   * against `diskLimitBytes` (see disk-watch.ts); absent where it cannot be told.
   */
  storageBytes?(): Promise<number>;
  /** The most `storageBytes` may reach (sandbox.limits.diskMB). */
  readonly diskLimitBytes?: number;
  /**
   * A stamp of the merged view (see view-stamp.ts): two taken with the same `since` are equal
   * only if nothing in the view changed in between. Undefined where it cannot be told cheaply
   * (a backend without it, a view with too much in it).
   */
  viewStamp?(since?: ViewStamp): Promise<ViewStamp | undefined>;
  /** Releases processes (e.g. a namespace holder) but keeps storage. Safe to call repeatedly. */
  release(): Promise<void>;
  /** Releases and deletes this sandbox's storage. */
  destroy(): Promise<void>;
  /**
   * JSON that, with the files under `dir`, rebuilds this sandbox in a later process (see
   * BackendSession.restore). Read at every registry write, so it must reflect the current state.
   */
  saveState(): unknown;
}

/** A sandbox as saved by an earlier process: its storage name and its saveState(). */
export interface SavedSandbox {
  name: string;
  state: unknown;
}

/** What BackendSession.restore rebuilt. */
export interface RestoredSandboxes {
  /** By storage name. */
  sandboxes: Map<string, BackendSandbox>;
  /**
   * Saved sandboxes whose storage is damaged beyond repair (by storage name, with the reason):
   * left out, their leftovers deleted, while every other sandbox comes back.
   */
  lost: Map<string, string>;
}

export interface BackendSession {
  createRoot(name: string): Promise<BackendSandbox>;
  /**
   * Stacks a new sandbox on `parent`'s current state. The caller holds the parent exclusively
   * (no file operation in flight); `parentBusy` says whether commands still run in it.
   */
  spawnChild(parent: BackendSandbox, name: string, opts: { parentBusy: boolean }): Promise<BackendSandbox>;
  /**
   * Called after sandboxes were destroyed: frees shared storage (layers) that no sandbox of this
   * backend session uses any more. The backend tracks its sandboxes itself, from the moment a
   * create or spawn decides what they stack on until they are destroyed, so sandboxes still being
   * created (not yet known to the caller or its registry) keep theirs.
   */
  collectGarbage(): Promise<void>;
  /**
   * Rebuilds the sandboxes an earlier process saved (parents first), before any is used. The
   * registry may lag the disk by one crash: storage of sandboxes it does not list is deleted,
   * and whatever else a crash interrupted is repaired or dropped. Processes and mounts are not
   * restarted here; they come back on first use. A sandbox whose storage is damaged (which the
   * backend's own crash-ordering never produces) is reported in `lost` and left out; the others
   * still come back.
   */
  restore(saved: readonly SavedSandbox[]): Promise<RestoredSandboxes>;
  /**
   * True when a sandbox's commands must have ended before its base can change (the overlay
   * backends remount its view, which would kill them); false when files change under them.
   */
  readonly rebaseNeedsIdle: boolean;
  /**
   * Builds what the base refreshed to `next` consists of, under names derived from `number`,
   * without changing anything a sandbox uses. Deletes what an interrupted earlier attempt left
   * under those names first. Cost follows the files that differ from the base, not the repository.
   */
  prepareBase(next: Snapshot, number: number): Promise<PreparedBase>;
  /**
   * Moves one sandbox from `change.from` onto the session's current base (the context already
   * names it): from now on it sees the new snapshot wherever neither it nor its ancestors changed
   * the path. The caller holds the sandbox exclusively (idle when rebaseNeedsIdle). Idempotent,
   * so a resume can repeat it after a crash in the middle of a refresh.
   */
  rebase(sb: BackendSandbox, change: BaseChange): Promise<void>;
  /**
   * Of the changed paths, those where the sandbox, after rebase(), does not see the current snapshot
   * (it or an ancestor changed them itself). Same preconditions as rebase().
   */
  overridden(sb: BackendSandbox, change: BaseChange): Promise<string[]>;
}

export interface ProbeOutcome {
  ok: boolean;
  /** Why the backend is unavailable, or what it was checked with. */
  detail: string;
}

export interface SandboxBackend {
  readonly name: BackendName;
  /** True when commands see the merged view at the repository's own absolute path. */
  readonly mountsAtRepoPath: boolean;
  probe(scratchDir: string): Promise<ProbeOutcome>;
  /** Opens the session's sandboxes; their commands are confined as `containment` says. */
  open(ctx: SessionContext, containment: SessionContainment): Promise<BackendSession>;
}
