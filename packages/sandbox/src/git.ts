import { GitError } from './errors.js';
import { runProcess } from './run-process.js';
import { inheritedEnv } from './secret-env.js';

export interface GitRunOptions {
  cwd?: string;
  env?: Readonly<Record<string, string>>;
  input?: string | Uint8Array;
  /** Exit codes other than 0 that are answers, not failures (e.g. 1 from check-ignore). */
  okExitCodes?: readonly number[];
}

export interface GitOutput {
  stdout: Buffer;
  stderr: string;
  exitCode: number;
}

/**
 * Runs one git command; the prefix lets the same code run git inside a sandbox's namespace. Which
 * git dir and config it may trust is added around it (see trusted-git.ts).
 */
export type GitRunner = (args: readonly string[], opts?: GitRunOptions) => Promise<GitOutput>;

// Inherited git variables (e.g. when the CLI runs from a git hook) would silently redirect our
// plumbing at another repository or index.
const REDIRECTING_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_PREFIX',
  'GIT_NAMESPACE',
  'GIT_QUARANTINE_PATH',
];

/**
 * Config handed down in the environment (by `git -c`, or GIT_CONFIG_COUNT/KEY/VALUE), e.g. when
 * the CLI runs from a git alias or hook: it would apply to all our plumbing, even where we trust
 * no config at all (see trusted-git.ts).
 */
function isPassedDownConfig(name: string): boolean {
  return name === 'GIT_CONFIG_PARAMETERS' || name === 'GIT_CONFIG_COUNT' || /^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name);
}

export function cleanGitEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env = inheritedEnv();
  for (const k of REDIRECTING_VARS) delete env[k];
  for (const k of Object.keys(env)) if (isPassedDownConfig(k)) delete env[k];
  // Stable, parseable messages and no prompts or optional lock writes into the user's repo.
  env.LC_ALL = 'C';
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_OPTIONAL_LOCKS = '0';
  return { ...env, ...extra };
}

export function makeGitRunner(prefix: readonly string[] = []): GitRunner {
  return async (args, opts = {}) => {
    const [file, ...pre] = prefix.length > 0 ? [...prefix, 'git'] : ['git'];
    const result = await runProcess(file, [...pre, ...args], { cwd: opts.cwd, env: cleanGitEnv(opts.env), input: opts.input });
    const exitCode = result.exitCode ?? -1;
    const stderr = result.stderr.toString('utf8');
    if (result.error || (exitCode !== 0 && !(opts.okExitCodes ?? []).includes(exitCode))) {
      throw new GitError(args, stderr || String(result.error?.message ?? result.signal ?? ''), result.exitCode, result.error);
    }
    return { stdout: result.stdout, stderr, exitCode };
  };
}

export const hostGit: GitRunner = makeGitRunner();

export function text(out: GitOutput): string {
  return out.stdout.toString('utf8').trim();
}

/** Splits NUL-terminated output (`-z`) into its fields. */
export function nulFields(buf: Buffer): string[] {
  const s = buf.toString('utf8');
  const parts = s.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}
