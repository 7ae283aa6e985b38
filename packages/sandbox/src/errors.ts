import type { OmittedFile } from './apply-policy.js';

/**
 * Every failure this package raises is a SandboxError with a stable `code`, so callers (the
 * tools, the CLI) can branch on it and show the message, which always says what to do next.
 */
export type SandboxErrorCode =
  | 'not-a-repo'
  /** git is not installed (or not on PATH). */
  | 'git-missing'
  | 'bad-state-dir'
  | 'backend-unavailable'
  | 'path-escape'
  | 'not-found'
  /** A session is owned by a process that still runs. */
  | 'in-use'
  | 'discarded'
  | 'git'
  | 'apply-failed'
  /** A diff to apply holds changes the apply policy leaves out (see OmitRule); nothing was applied. */
  | 'unsafe-change'
  | 'invalid-argument'
  /** A diff's patch is not in the form git writes (see PatchFormatError). */
  | 'bad-patch'
  /** The caller's AbortSignal stopped a wait (e.g. a base refresh waiting for commands to end). */
  | 'aborted'
  /** A write would take the sandbox's storage over its disk limit (see DiskLimitError). */
  | 'disk-limit'
  | 'internal';

export class SandboxError extends Error {
  readonly code: SandboxErrorCode;

  constructor(code: SandboxErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SandboxError';
    this.code = code;
  }
}

/** A path given to a file operation resolves outside the sandbox's view of the repository. */
export class SandboxPathError extends SandboxError {
  readonly path: string;
  /** What is wrong with the path, as the message says it ("is outside the repository"). */
  readonly why: string;
  /** Where a symbolic link on the way led, when that is what took the path out. */
  readonly linkTarget: string | undefined;

  constructor(path: string, why: string, advice = 'Use a path inside the repository, relative to its root.', linkTarget?: string) {
    super('path-escape', `Path "${path}" ${why}. ${advice}`);
    this.name = 'SandboxPathError';
    this.path = path;
    this.why = why;
    this.linkTarget = linkTarget;
  }
}

/** The subcommand and its first arguments, past the options that set up git (`--git-dir=…`, `-c k=v`). */
function commandOf(args: readonly string[]): readonly string[] {
  let i = 0;
  while (i < args.length && args[i].startsWith('-')) i += args[i] === '-c' || args[i] === '-C' ? 2 : 1;
  return args.slice(i, i + 3);
}

/** A git command failed; carries its arguments and stderr for diagnosis. */
export class GitError extends SandboxError {
  readonly args: readonly string[];
  readonly stderr: string;
  readonly exitCode: number | undefined;

  constructor(args: readonly string[], stderr: string, exitCode: number | undefined, cause?: unknown) {
    const first = stderr.trim().split('\n').slice(-3).join(' / ') || 'no output';
    super('git', `git ${commandOf(args).join(' ')} failed (exit ${exitCode ?? '?'}): ${first}`, { cause });
    this.name = 'GitError';
    this.args = args;
    this.stderr = stderr;
    this.exitCode = exitCode;
  }
}

/** A patch could not be applied at all (as opposed to applying with conflicts). */
export class ApplyError extends SandboxError {
  readonly stderr: string;

  constructor(target: string, stderr: string) {
    super(
      'apply-failed',
      `The changes could not be applied to ${target}; nothing was changed there. ` +
        `git said: ${stderr.trim() || '(nothing)'}. ` +
        'Resolve the files it names (for example commit, stash or move them aside) and apply again.',
    );
    this.name = 'ApplyError';
    this.stderr = stderr;
  }
}

/**
 * A diff about to be applied holds changes the apply policy leaves out (see OmitRule), e.g. a
 * file the user's working tree gained, ignored, while the diff was being reviewed. Nothing was
 * applied; a fresh diff leaves them out.
 */
export class UnsafeChangeError extends SandboxError {
  readonly omitted: readonly OmittedFile[];

  constructor(omitted: readonly OmittedFile[]) {
    super(
      'unsafe-change',
      `Nothing was applied: the diff holds changes that may not be applied: ${omitted.map((o) => `${o.path} (${o.reason})`).join('; ')}. ` +
        'Take the diff again (it leaves these out, saying why) and apply that.',
    );
    this.name = 'UnsafeChangeError';
    this.omitted = omitted;
  }
}

/**
 * A diff's patch could not be read into files and hunks. Diffs come from our own git, so this
 * is a bug rather than something the user did; nothing was applied.
 */
export class PatchFormatError extends SandboxError {
  constructor(detail: string) {
    super(
      'bad-patch',
      `The diff's patch could not be read (${detail}), so its hunks cannot be picked one by one; nothing was applied. ` +
        'Accept or reject the whole diff instead, and please report this with the patch.',
    );
    this.name = 'PatchFormatError';
  }
}

/**
 * Hunks accepted in a review that the diff being applied does not have: the changes moved since
 * they were reviewed (the agent kept working), so the decision may not mean the same hunks.
 */
export class UnknownHunkError extends SandboxError {
  readonly ids: readonly string[];

  constructor(ids: readonly string[]) {
    super(
      'invalid-argument',
      `Nothing was applied: the diff has no hunk ${ids.join(', ')}; the changes moved since they were reviewed. Review them again.`,
    );
    this.name = 'UnknownHunkError';
    this.ids = ids;
  }
}
