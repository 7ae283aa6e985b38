import { GitError } from './errors.js';
import { runProcess } from './run-process.js';
import { shellWord } from './shell-word.js';
import { inheritedEnv } from './secret-env.js';
import { timed } from './timing.js';

export interface GitRunOptions {
  cwd?: string;
  env?: Readonly<Record<string, string>>;
  input?: string | Uint8Array;
  /** Exit codes other than 0 that are answers, not failures (e.g. 1 from check-ignore). */
  okExitCodes?: readonly number[];
  /**
   * Several git commands run one after another in one process (a shell), instead of `args`
   * (which must then be empty): where git runs behind a namespace entry (see NamespaceHolder.git),
   * each separate command costs that entry again, and every round trip waits for this process's
   * event loop. The output is the last step's stdout (or what steps write there); the first step
   * that fails ends the run with its exit code and stderr, else the run exits as its last step did. Wrappers that add git arguments or
   * environment apply them to every step.
   */
  steps?: readonly GitStep[];
  /**
   * Sequences of steps run side by side after `steps` (each stops at its first failure), for
   * independent work on separate indexes: git's start-up is most of a small step's cost, and two
   * lanes use both cores. The run fails with the first failed lane's exit code. A lane's output
   * reaches the caller only through files (GitStep.stdout): interleaved, it would mean nothing.
   */
  lanes?: ReadonlyArray<readonly GitStep[]>;
}

/** One command of a GitRunOptions.steps run. */
export interface GitStep {
  args: readonly string[];
  /** Variables for this step alone (say, its own GIT_INDEX_FILE), over the run's. */
  env?: Readonly<Record<string, string>>;
  /** A file to read stdin from (otherwise the run's input, which only one step may read). */
  stdin?: string;
  /** A file to write stdout to (otherwise the run's stdout). */
  stdout?: string;
  okExitCodes?: readonly number[];
  /** Not run (counting as a success) when the `stdin` file is empty: a git process saved. */
  skipWhenStdinEmpty?: boolean;
}

/** `args` and `steps` with `pre` in front of each command's arguments (for wrappers that add git arguments). */
export function withGitArgs(pre: readonly string[], args: readonly string[], opts: GitRunOptions): [string[], GitRunOptions] {
  if (!opts.steps && !opts.lanes) return [[...pre, ...args], opts];
  const wrap = (steps: readonly GitStep[]): GitStep[] => steps.map((s) => ({ ...s, args: [...pre, ...s.args] }));
  return [
    [],
    { ...opts, ...(opts.steps ? { steps: wrap(opts.steps) } : {}), ...(opts.lanes ? { lanes: opts.lanes.map(wrap) } : {}) },
  ];
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
    const command = opts.steps || opts.lanes ? ['/bin/sh', '-c', stepsScript(opts.steps ?? [], opts.lanes)] : ['git', ...args];
    const [file, ...rest] = [...prefix, ...command];
    const startedAt = performance.now();
    const result = await runProcess(file, rest, { cwd: opts.cwd, env: cleanGitEnv(opts.env), input: opts.input });
    timed('git', startedAt, () => `${prefix.length > 0 ? 'in the sandbox: ' : ''}${gitSummary(args, opts)}`);
    const exitCode = result.exitCode ?? -1;
    const stderr = result.stderr.toString('utf8');
    if (result.error || (exitCode !== 0 && !(opts.okExitCodes ?? []).includes(exitCode))) {
      // A steps run names every step (the failing one's stderr says which).
      const all = [...(opts.steps ?? []), ...(opts.lanes ?? []).flat()];
      const named = all.length > 0 ? all.flatMap((st, i) => (i === 0 ? st.args : ['&&', ...st.args])) : args;
      throw new GitError(named, stderr || String(result.error?.message ?? result.signal ?? ''), result.exitCode, result.error);
    }
    return { stdout: result.stdout, stderr, exitCode };
  };
}

export const hostGit: GitRunner = makeGitRunner();

/** The git commands a run made, for timing lines: `diff-tree`, or steps `a+b` then lanes `(c+d|e+f)`. */
function gitSummary(args: readonly string[], opts: GitRunOptions): string {
  const sub = (a: readonly string[]): string => {
    for (let i = 0; i < a.length; i++) {
      if (a[i] === '-c' || a[i] === '-C') i++;
      else if (!a[i].startsWith('-')) return a[i];
    }
    return '?';
  };
  if (!opts.steps && !opts.lanes) return sub(args);
  const seq = (steps: readonly GitStep[]): string => steps.map((s) => sub(s.args)).join('+');
  const lanes = opts.lanes?.length ? `(${opts.lanes.map(seq).join('|')})` : '';
  return [seq(opts.steps ?? []), lanes].filter(Boolean).join(' then ');
}


/**
 * The shell script that runs `steps` in order, stopping at the first failure with its exit code;
 * otherwise it exits with the last step's code (one of its okExitCodes, say `git apply`'s 1).
 * With `lanes`, those run next, side by side, and the script exits 0 once all of them succeeded.
 */
function stepsScript(steps: readonly GitStep[], lanes?: ReadonlyArray<readonly GitStep[]>): string {
  const lines = steps.map(stepLine);
  if (!lanes || lanes.length === 0) return lines.concat('exit $c').join('\n');
  lanes.forEach((lane, i) => lines.push(`(\n${lane.map(stepLine).join('\n')}\nexit $c\n) &`, `p${i}=$!`));
  lanes.forEach((_, i) => lines.push(`wait $p${i}; c${i}=$?`));
  lanes.forEach((_, i) => lines.push(`[ $c${i} -eq 0 ] || exit $c${i}`));
  return lines.concat('exit 0').join('\n');
}

function stepLine(step: GitStep): string {
  const env = Object.entries(step.env ?? {}).map(([k, v]) => `${k}=${shellWord(v)} `);
  const io = `${step.stdin !== undefined ? ` <${shellWord(step.stdin)}` : ''}${step.stdout !== undefined ? ` >${shellWord(step.stdout)}` : ''}`;
  const ok = [0, ...(step.okExitCodes ?? [])].map((c) => `[ $c -eq ${c} ]`).join(' || ');
  const line = `${env.join('')}git ${step.args.map(shellWord).join(' ')}${io}; c=$?; ${ok} || exit $c`;
  return step.skipWhenStdinEmpty && step.stdin !== undefined ? `if [ -s ${shellWord(step.stdin)} ]; then ${line}; else c=0; fi` : line;
}

export function text(out: GitOutput): string {
  return out.stdout.toString('utf8').trim();
}

/** Splits NUL-terminated output (`-z`) into its fields, as bytes (names need not be UTF-8). */
export function nulParts(buf: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let nul = buf.indexOf(0, start); nul !== -1; nul = buf.indexOf(0, start)) {
    parts.push(buf.subarray(start, nul));
    start = nul + 1;
  }
  if (start < buf.length) parts.push(buf.subarray(start));
  return parts;
}

/** Splits NUL-terminated output (`-z`) into its fields. */
export function nulFields(buf: Buffer): string[] {
  const s = buf.toString('utf8');
  const parts = s.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}
