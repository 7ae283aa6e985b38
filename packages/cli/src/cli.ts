// The command line: flags, then headless, interactive or demo; main.ts starts it.
import { readFileSync } from 'node:fs';
import { EXIT, UserError } from './exit-codes.js';
import { closeInheritedFds } from './inherited-fds.js';
import { acceptsEdits, joinPrompt, parseArgs, planRun, sessionExtras, type Flags } from './parse-args.js';
import { readAll, readIfAny, userTurns } from './stdin-input.js';
import { traceTimingFromEnv } from './timing-trace.js';
import { terminalSafe } from './terminal-safe.js';

/** How long `-p "task"` waits for something on a stdin that is not a terminal before going on without it. */
const STDIN_WAIT_MS = 3_000;
const STOPPED = Symbol('stopped');

/** `-p @file`: the task is the file's text. */
function readTaskFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code})`;
    // "-p '@src/a.ts explain it'" meant a mention: a task that starts with @ is a task file.
    const mention = /\s/.test(file) ? ' To mention a file in the task, put a word before it: -p "explain @src/a.ts".' : '';
    throw new UserError(`The task file ${file} ${why}. Give an existing file after @, or the task itself after -p.${mention}`, EXIT.usage);
  }
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv);
  if (typeof parsed === 'number') return parsed;
  const flags = parsed.flags;
  outputFormat = flags.outputFormat;
  const controller = new AbortController();
  process.on('SIGINT', () => controller.abort('SIGINT'));
  traceTimingFromEnv(process.env, (line) => process.stderr.write(line));
  const plan = planRun(parsed, { stdinIsTTY: process.stdin.isTTY === true, stdoutIsTTY: process.stdout.isTTY === true });
  // Loaded only now: --version and --help must not pay for the runtime, SQLite and the SDK.
  if (plan.kind === 'demo') {
    const { runDemo } = await import('./demo.js');
    return runDemo({ writers: writers(), signal: controller.signal, interactive: process.stdout.isTTY === true });
  }
  const extras = sessionExtras(flags, process.cwd());
  if (plan.kind === 'interactive') {
    const { runInteractive } = await import('./run-tui.js');
    return runInteractive({
      cwd: process.cwd(),
      env: process.env,
      flags,
      extras,
      ...(plan.firstMessage !== undefined ? { firstMessage: plan.firstMessage } : {}),
    });
  }
  const out = writers();
  const warn = (message: string) => out.err(`infinity-code: ${message}\n`);
  const prompt = plan.prompt?.startsWith('@') ? readTaskFile(plan.prompt.slice(1)) : plan.prompt;
  // Ctrl+C while stdin is awaited (a producer that never ends) stops the wait: nothing has started.
  const interrupted = new Promise<typeof STOPPED>((resolve) => {
    if (controller.signal.aborted) resolve(STOPPED);
    else controller.signal.addEventListener('abort', () => resolve(STOPPED), { once: true });
  });
  let task: string;
  let moreTurns: AsyncIterable<string> | undefined;
  if (plan.stdin === 'turns') {
    const turns = userTurns(process.stdin, warn);
    const first = await Promise.race([turns.next(), interrupted]);
    if (first === STOPPED) return EXIT.interrupted;
    if (first.done) throw new UserError('--input-format stream-json: stdin ended without a user message.', EXIT.usage);
    task = first.value;
    moreTurns = { [Symbol.asyncIterator]: () => turns };
  } else if (plan.stdin === 'append') {
    const piped = await readIfAny(process.stdin, STDIN_WAIT_MS);
    if (piped === undefined) {
      warn(`nothing came on stdin within ${STDIN_WAIT_MS / 1000}s; going on without it (run with stdin from /dev/null to skip the wait).`);
    }
    task = joinPrompt(prompt, piped);
  } else {
    const piped = plan.stdin === 'prompt' ? await Promise.race([readAll(process.stdin), interrupted]) : undefined;
    if (piped === STOPPED) return EXIT.interrupted;
    task = joinPrompt(prompt, piped);
  }
  // A headless run ends on SIGTERM and SIGHUP as on SIGINT: result line, patch saved (the TUI
  // keeps the default for them).
  process.on('SIGTERM', () => controller.abort('SIGTERM'));
  process.on('SIGHUP', () => controller.abort('SIGHUP'));
  const { runHeadless } = await import('./run-headless.js');
  return runHeadless({
    task,
    ...(moreTurns ? { moreTurns } : {}),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.effort ? { effort: flags.effort } : {}),
    yes: acceptsEdits(flags),
    outputFormat: flags.outputFormat,
    verbose: flags.verbose === true,
    includePartialMessages: flags.includePartialMessages === true,
    continueLatest: flags.continue === true,
    ...(typeof flags.resume === 'string' ? { resume: flags.resume } : {}),
    ...(flags.maxTurns !== undefined ? { maxTurns: flags.maxTurns } : {}),
    ...(flags.timeout !== undefined ? { timeoutMs: flags.timeout } : {}),
    ...(flags.network !== undefined ? { network: flags.network } : {}),
    ...(flags.mcpConfig ? { mcpConfig: flags.mcpConfig } : {}),
    strictMcpConfig: flags.strictMcpConfig === true,
    unsandboxed: flags.unsandboxed === true,
    extras,
    cwd: process.cwd(),
    env: process.env,
    writers: out,
    signal: controller.signal,
  });
}

/**
 * Where output goes. A reader that goes away (`| head -1`) closes stdout: the run goes on and
 * finishes cleanly (sessions and sandboxes closed), writing nothing more there.
 */
function writers() {
  let stdoutOpen = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    stdoutOpen = false;
  });
  return {
    // Nothing a model, a command or a file name says may drive the user's terminal.
    out: (s: string) => void (stdoutOpen && process.stdout.write(terminalSafe(s))),
    err: (s: string) => void process.stderr.write(terminalSafe(s)),
  };
}

// First, before anything is started: no command may get what our parent left open.
closeInheritedFds(process.argv, process.execArgv, process.env.NODE_OPTIONS);

const debug = process.argv.includes('--debug');
const KNOWN_ERRORS = new Set(['SandboxError', 'SandboxPathError', 'GitError', 'ApplyError', 'StoreError', 'ModelError']);
/**
 * --output-format once the flags are read. commander's own parse errors (an unknown flag, a bad
 * value of one) come before it and stay text only, as Claude Code's do: the format asked for may
 * be the bad value itself.
 */
let outputFormat: Flags['outputFormat'] = 'text';
main(process.argv.slice(2)).then(
  (code) => exit(code),
  async (err: unknown) => {
    // A failure to print the result must not keep stderr's message and the exit code from coming.
    if (outputFormat !== 'text') await printFailedResult(err).catch(() => {});
    if (err instanceof UserError) {
      process.stderr.write(`infinity-code: ${err.message}\n`);
      exit(err.exitCode);
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    // The packages' typed errors carry messages written for the user: no stack trace for those.
    if (err instanceof Error && KNOWN_ERRORS.has(err.name) && !debug) {
      process.stderr.write(`infinity-code: ${message}\n`);
      exit(EXIT.failed);
      return;
    }
    process.stderr.write(
      debug && err instanceof Error
        ? `infinity-code: unexpected failure: ${err.stack ?? message}\n`
        : `infinity-code: unexpected failure: ${message}\n(run again with --debug for details)\n`,
    );
    exit(EXIT.failed);
  },
);

/**
 * JSON output has its result object on every exit path, as Claude Code's: a failure before the
 * run started (a task file missing, no API key, a bad config file) too. A run that got as far as
 * printing it (see runHeadless) is not told twice. Loaded only now: start-up must not pay for it.
 */
async function printFailedResult(err: unknown): Promise<void> {
  const { failedResult, resultPrinted } = await import('./result.js');
  if (resultPrinted(err) || process.stdout.destroyed) return;
  // A reader that went away (EPIPE): nothing to tell it, and no crash over it.
  process.stdout.on('error', () => {});
  const result = failedResult(err, { durationMs: performance.now() });
  // A stream-json line has its time, as every line of that format does.
  const line = outputFormat === 'stream-json' ? { ...result, timestamp: new Date().toISOString() } : result;
  process.stdout.write(terminalSafe(`${JSON.stringify(line)}\n`));
}

/**
 * Ends the process once what was written to stdout and stderr is out. Everything the run started
 * was stopped and waited for before main() resolved (sandboxes, commands, the store), so nothing
 * is left to finish: exiting at once spares the teardown of a drained event loop (freeing the
 * heap of everything loaded), tens of milliseconds between the answer and the shell prompt.
 */
function exit(code: number): void {
  process.exitCode = code;
  let pending = 2;
  const flushed = (): void => {
    if (--pending === 0) process.exit(code);
  };
  // A reader that went away (EPIPE) left a destroyed stream: nothing more to wait for there.
  for (const out of [process.stdout, process.stderr]) {
    if (out.destroyed || !out.writable) flushed();
    else out.write('', flushed);
  }
}
