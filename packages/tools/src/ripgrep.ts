import { access, constants } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { StringDecoder } from 'node:string_decoder';
import type { Sandbox } from '@infinity-code/sandbox';
import { ToolError } from './errors.js';

// Required when a search runs, not imported: an ES import of this CommonJS package would load it
// (and Node's CommonJS lexer, to read its exports) before the first model request.
const load = createRequire(import.meta.url);
const ripgrepBinary = (): string => (load('@vscode/ripgrep') as typeof import('@vscode/ripgrep')).rgPath;

/** Flags every search shares: .gitignore honoured even without a git dir, hidden files in, .git out. */
const COMMON_ARGS = ['--no-config', '--no-require-git', '--hidden', '--color', 'never'];
const EXCLUDE_GIT_DIR = ['--glob', '!.git'];

export interface RgRun {
  /** stderr (errors about single files, or why rg failed). */
  stderr: string;
  exitCode: number | null;
  /** True when `onLine` asked to stop early. */
  stopped: boolean;
}

/**
 * Runs ripgrep (the binary of @vscode/ripgrep) inside the sandbox's merged view through
 * `sandbox.exec`, from the repository root, so it sees exactly what commands see (on overlay
 * backends the view exists only inside the sandbox's mount namespace). `onLine` gets each line
 * of stdout (or each NUL-terminated entry, with `separator: '\0'`) and returns false to stop the
 * search (the process group is killed). Patterns go in
 * `flags` (`--regexp`), so nothing the model sends is read as an option.
 */
export async function runRipgrep(
  sb: Sandbox,
  args: { flags: readonly string[]; paths?: readonly string[]; separator?: '\n' | '\0' },
  onLine: (line: string) => boolean | void,
  opts: { timeoutMs?: number } = {},
): Promise<RgRun> {
  const rgPath = ripgrepBinary();
  await access(rgPath, constants.X_OK).catch(() => {
    throw new ToolError(
      `ripgrep is not installed (expected at ${rgPath}); reinstall the @vscode/ripgrep package. Meanwhile use ` +
        'execute_command with grep -rn.',
    );
  });
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? 60_000);
  // Our .git exclusion comes after the caller's globs: in ripgrep the last matching glob wins.
  const argv = [rgPath, ...COMMON_ARGS, ...args.flags, ...EXCLUDE_GIT_DIR, '--', ...(args.paths ?? [])];
  // A user's RIPGREP_CONFIG_PATH must not change what the model sees (--no-config also says so).
  const proc = await sb.exec(argv, { signal: timeout, env: { RIPGREP_CONFIG_PATH: undefined } });
  let stopped = false;
  let stderr = '';
  let partial = '';
  const decoder = new StringDecoder('utf8');
  const separator = args.separator ?? '\n';
  const feed = (text: string): void => {
    if (stopped) return;
    const lines = (partial + text).split(separator);
    partial = lines.pop()!;
    for (const line of lines) {
      if (onLine(line) === false) {
        stopped = true;
        proc.kill();
        return;
      }
    }
  };
  proc.stdout.on('data', (b: Buffer) => feed(decoder.write(b)));
  proc.stderr.on('data', (b: Buffer) => {
    if (stderr.length < 10_000) stderr += b.toString('utf8');
  });
  const result = await proc.done;
  feed(decoder.end());
  if (!stopped && partial !== '') onLine(partial);
  if (timeout.aborted && !stopped) {
    throw new ToolError('The search took too long and was stopped. Narrow it with a path or a glob, or a more specific pattern.');
  }
  return { stderr: stderr.trim(), exitCode: result.exitCode, stopped };
}
