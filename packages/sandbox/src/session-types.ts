// What SandboxSession takes and reports: its options and results, apart from the class.
import type { ApplyPolicyOptions } from './apply-policy.js';
import type { BackendName, SandboxBackend } from './backend.js';
import type { Snapshot } from './base-snapshot.js';
import type { ContainmentOptions } from './containment.js';

export interface OpenSessionOptions {
  /** Any path inside the user's repository. */
  repo: string;
  /** Storage root; `$XDG_STATE_HOME/infinity-code` (or `~/.local/state/infinity-code`) by default. */
  stateDir?: string;
  /**
   * Outside every git repository, work on the folder `repo` names, as it is: its snapshots are
   * kept in a private git dir under `stateDir` (never a `.git` in the folder), and diffs, applying
   * and resuming work as in a repository; its sandboxes have no `.git`. `/`, the home directory
   * and directories holding it are refused ('not-a-repo'); bounding the folder's size is the
   * caller's (folderProblem with maxFiles, from `@infinity-code/sandbox/repo-problems`). Without
   * it, a path in no repository is refused with 'not-a-repo'.
   */
  allowFolder?: boolean;
  /**
   * Backend to use; chosen by the start-up probe when omitted. When resuming, the session's own
   * backend is used: naming another one is an error.
   */
  backend?: BackendName | SandboxBackend;
  /** Clean up after sessions whose owner is gone in `stateDir` first (default true); see gc(). */
  collectStale?: boolean;
  /** How many days gc keeps resumable sessions of other repositories after they were left (default 7). */
  keepDays?: number;
  /**
   * Id of an earlier session of this repository to take over instead of taking a new snapshot:
   * every sandbox comes back by its id with its layers, parent and view at spawn. Throws
   * SandboxError 'not-found' when the session is gone (open a fresh one then), 'in-use' when
   * a live process owns it.
   */
  resume?: string;
  /**
   * A fresh session only: resolve as soon as the session exists (its id, backend and repository
   * are known, a few milliseconds) and take the snapshot, materialise the base and clean up after
   * stale sessions in the background. create(), refreshBase() and changedSinceSnapshot() wait
   * for it; `ready` settles when it is done, rejecting with what failed (then the session left
   * nothing behind and its methods fail with that error). The snapshot is taken from the
   * working tree as it is a moment after open resolves, not as it was when open was called.
   */
  background?: boolean;
  /** What commands may reach outside their sandbox (see ContainmentOptions). */
  containment?: ContainmentOptions;
  /**
   * What diffs leave out beyond the fixed rules (see Sandbox.diff): `maxFileBytes` (default
   * 20 MB) and `reservedDirs` (default `.infinity`, the CLI's own directory).
   */
  applyPolicy?: Partial<Pick<ApplyPolicyOptions, 'maxFileBytes' | 'reservedDirs'>>;
}

export interface CloseOptions {
  /**
   * Stop every command and sandbox process but keep the storage, so `openSession({ resume: id })`
   * can bring the sandboxes back later (gc keeps it for `keepDays`). Default false: delete it.
   */
  keep?: boolean;
}


/** A sandbox a resume could not bring back, because its storage was damaged. */
export interface LostSandbox {
  /** The id it was created with. */
  id: string;
  /** What was wrong with its storage. */
  reason: string;
}

/** What SandboxSession.refreshBase did. */
export interface BaseRefresh {
  /**
   * Repo-relative paths (files and symlinks) that changed in the user's working tree since the
   * previous snapshot: modified, added and deleted ones. Empty when nothing changed (then
   * nothing else did either). Names that are not UTF-8 read as git shows them (`caf\351.txt`).
   */
  files: string[];
  /**
   * Of `files`, those some live sandbox changed itself (or inherited a change to from an
   * ancestor), so that sandbox still sees its own version there, not the user's. Its diff then
   * replaces the user's new version of those files: show that before it is applied.
   */
  overridden: string[];
  /** `overridden` per sandbox id, for the sandboxes that have any. */
  overriddenBy: Record<string, string[]>;
  /** The session's snapshot now (the same as before when nothing changed). */
  snapshot: Snapshot;
}

export interface RefreshOptions {
  /**
   * Stops waiting for commands to end (overlay backends remount the views, see refreshBase)
   * with SandboxError 'aborted'; nothing has changed then.
   */
  signal?: AbortSignal;
}
