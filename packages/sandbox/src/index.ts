export {
  SandboxSession,
  openSession,
  type BaseRefresh,
  type CloseOptions,
  type LostSandbox,
  type OpenSessionOptions,
  type RefreshOptions,
  type SessionRecord,
} from './session.js';
export { Sandbox, type DiffOptions } from './sandbox.js';
export { execLine, shellWord } from './shell-word.js';
export {
  classifyChanges,
  resolveLink,
  formatBytes,
  DEFAULT_APPLY_POLICY,
  DEFAULT_MAX_FILE_BYTES,
  type ApplyPolicyOptions,
  type Classified,
  type LinkDestination,
  type LinkLookup,
  type OmitRule,
  type OmittedFile,
  type PolicyChange,
  type PolicyFacts,
} from './apply-policy.js';
export type { ApplyResult } from './apply.js';
export type { ChangedFile, ChangeStatus, SandboxDiff } from './diff.js';
export { changedSinceReview, patchFiles, selectHunks, type PatchFile, type PatchFileStatus, type PatchHunk } from './hunks.js';
export type { ExecOptions, ExecProcess, ExecResult } from './exec.js';
export type { DirEntry, EntryType, FileStat } from './view-fs.js';
export type { BackendName, DiffSince, ProbeOutcome, SandboxBackend } from './backend.js';
export type { Snapshot } from './base-snapshot.js';
export type { CommandLimits, ContainmentOptions } from './containment.js';
export type { RepoInfo } from './repo.js';
export type { ProcessIdentity } from './proc.js';
export { probeBackends, backendByName, backendsInPreferenceOrder, type ProbeReport } from './probe.js';
export { makeCopyBackend, type CopyBackendOptions } from './copy-backend.js';
export { gc, DEFAULT_KEEP_DAYS, type GcOptions, type GcReport } from './gc.js';
export { listSessions, type SessionSummary } from './list-sessions.js';
export { defaultStateDir } from './state-dir.js';
export { explainRepoProblem, findDotGit, type GitFailure, type RepoProblem, type RepoProblemCode } from './repo-problems.js';
export {
  SandboxError,
  SandboxPathError,
  GitError,
  ApplyError,
  UnsafeChangeError,
  PatchFormatError,
  UnknownHunkError,
  type SandboxErrorCode,
} from './errors.js';
export { resolveLimits } from './command-limits.js';
export { repoSummary, type RepoSummary } from './repo-summary.js';
export { DiskLimitError } from './disk-watch.js';
