// The command line: flags, then headless, interactive or demo; main.ts starts it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
// The light subpath: --help and the TUI's first frame must not pay for the runtime.
import { DEFAULT_MODEL, EFFORTS, type Effort } from '@infinity-code/runtime/models';
import { RETRY_KEYS } from './config.js';
import { parseDuration } from './duration.js';
import { EXIT, UserError } from './exit-codes.js';
import { closeInheritedFds } from './inherited-fds.js';
import { parseNetworkFlag, type NetworkSetting } from './sandbox-config.js';
import { traceTimingFromEnv } from './timing-trace.js';
import { terminalSafe } from './terminal-safe.js';

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

interface Flags {
  print?: string;
  yes?: boolean;
  outputFormat: 'text' | 'json' | 'stream-json';
  model?: string;
  effort?: Effort;
  continue?: boolean;
  resume?: string;
  maxTurns?: number;
  timeout?: number;
  unsandboxed?: boolean;
  network?: NetworkSetting;
  mcpConfig?: string[];
  demo?: boolean;
  debug?: boolean;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more.');
  return n;
}

function duration(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw new InvalidArgumentError('must be a duration like 90s, 5m, 1h, or a number of seconds.');
  return ms;
}

/**
 * The rest of what a user or a script needs to know, after the options: where settings come from
 * and what the exit code means. The codes are taken from EXIT so the two can't drift apart.
 */
const HELP_FOOTER = `
Environment:
  ANTHROPIC_API_KEY    your Anthropic API key (this or ANTHROPIC_AUTH_TOKEN is
                       needed for all but --demo)
  ANTHROPIC_AUTH_TOKEN a bearer token (a gateway's or proxy's) instead of a key
  ANTHROPIC_MODEL      the model (an id or alias) when --model is not given;
                       wins over the config's "model"
  ANTHROPIC_BASE_URL   the Messages API's address (https://api.anthropic.com if
                       unset); one that can't be reached fails at once (exit ${EXIT.config})
  NODE_EXTRA_CA_CERTS  a CA certificate file to trust (a proxy re-signing TLS)
  XDG_CONFIG_HOME      where your config file is (default ~/.config)
  XDG_STATE_HOME       where sandboxes are stored (default ~/.local/state)
  INFINITY_CODE_RETRY  retries of model calls, as JSON, e.g. {"maxRetries": 3};
                       ${wrapped(`keys: ${RETRY_KEYS.join(', ')}`, 23)}
  INFINITY_CODE_TRACE  1: print where the run's time goes to stderr, a line per
                       step (model calls, git, commands, diff, apply); a file
                       name: append those lines there instead

Files:
  ~/.config/infinity-code/config.json
                       your settings (under $XDG_CONFIG_HOME when set)
  .infinity/config.json
                       the repository's settings: may narrow your sandbox
                       settings, never widen them
  .infinity/state.db   the sessions' history (ignored by git)
  AGENTS.md            the project's instructions (CLAUDE.md when there is none;
                       also CLAUDE.local.md, and those of subdirectories)
  .infinity/commands/, .claude/commands/
                       project commands: name.md is /name (sub/name.md is
                       /sub:name), in the TUI and as -p "/name args"

Exit codes:
  ${EXIT.ok}    done
  ${EXIT.failed}    failed: a model or tool error, or git failing on the repository
  ${EXIT.usage}    usage error: a bad flag or argument, or not in a git repository
  ${EXIT.config}    configuration or authentication error: no API key or a rejected
       one, an ANTHROPIC_BASE_URL that can't be reached, an invalid config
       file, a retired model, git not installed
  ${EXIT.unapplied}    changes left unapplied (headless without --yes): the patch is
       saved in .infinity/patches/
  ${EXIT.limit}    a limit was reached (--max-turns, --timeout)
  ${EXIT.interrupted}  interrupted (continue with -c); ${EXIT.terminated} by SIGTERM, ${EXIT.hungUp} by SIGHUP
`;

/** `text` wrapped to 80 columns, starting at column `indent`, its next lines indented as much. */
function wrapped(text: string, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > 80) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

function parse(argv: string[]): Flags | number {
  const program = new Command()
    .name('infinity-code')
    .description('A terminal coding agent on a time-sliced agent runtime. Without -p it opens the terminal UI.')
    .version(pkg.version, '-v, --version')
    .option(
      '-p, --print <task>',
      'run the task headless (@file alone reads it from a file; @path inside it attaches the file): progress on stderr, the answer on stdout',
    )
    .option('--yes', 'accept every diff automatically and apply the result to the working tree')
    .addOption(
      new Option('--output-format <format>', 'headless output').choices(['text', 'json', 'stream-json']).default('text'),
    )
    .option(
      '--model <id>',
      `model id or alias (opus, sonnet, haiku, fable); default: ANTHROPIC_MODEL, else the config's "model", else ${DEFAULT_MODEL}`,
    )
    .addOption(
      new Option('--effort <level>', "how hard the model works (output_config.effort); default: the config's \"effort\", else the model's own")
        .choices(EFFORTS),
    )
    .option('-c, --continue', 'continue the latest session in this repository')
    .option('-r, --resume <session>', 'resume a session by id (or unique prefix)')
    .option('--max-turns <n>', 'stop a thread after this many model calls (exit code 5)', positiveInt)
    .option(
      '--timeout <duration>',
      'headless: stop the whole run after this long (90s, 5m, 1h, or seconds); its changes are saved as a patch (exit code 5)',
      duration,
    )
    .option(
      '--network <mode>',
      "network for the agent's commands: off, on, or domains separated by commas (default from config, else off)",
      parseNetworkFlag,
    )
    .option(
      '--mcp-config <file>',
      "MCP servers from this file (.mcp.json format; repeatable); with the repository's .mcp.json, starts its servers without asking",
      (file: string, files: string[] | undefined) => [...(files ?? []), file],
    )
    .option(
      '--unsandboxed',
      "let commands run where the sandbox can't confine them (otherwise headless refuses them and the TUI asks before each)",
    )
    .option('--demo', 'run a scripted demonstration in a throwaway repository (no API key needed)')
    .option('--debug', 'show stack traces of unexpected errors')
    .addHelpText('after', HELP_FOOTER)
    // Extra words get our own message (the task goes after -p), not commander's generic one.
    .allowExcessArguments(true)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw err;
  }
  if (program.args.length > 0) {
    throw new UserError(`Unexpected argument "${program.args[0]}". Give the task with -p "<task>".`, EXIT.usage);
  }
  return program.opts<Flags>();
}

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

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(argv: string[]): Promise<number> {
  const flags = parse(argv);
  if (typeof flags === 'number') return flags;
  const controller = new AbortController();
  process.on('SIGINT', () => controller.abort('SIGINT'));
  traceTimingFromEnv(process.env, (line) => process.stderr.write(line));
  // Loaded only now: --version and --help must not pay for the runtime, SQLite and the SDK.
  if (flags.demo) {
    const { runDemo } = await import('./demo.js');
    return runDemo({ writers: writers(), signal: controller.signal, interactive: process.stdout.isTTY === true });
  }
  let task = flags.print;
  if (task?.startsWith('@')) task = readTaskFile(task.slice(1));
  if (task === undefined && !process.stdin.isTTY) task = await readStdin();
  if (task === undefined) {
    if (flags.timeout !== undefined) {
      throw new UserError('--timeout limits headless runs only: give the task with -p "<task>".', EXIT.usage);
    }
    const { runInteractive } = await import('./run-tui.js');
    return runInteractive({ cwd: process.cwd(), env: process.env, flags });
  }
  if (task.trim() === '') throw new UserError('The task is empty: say what you want done.', EXIT.usage);
  // A headless run ends on SIGTERM and SIGHUP as on SIGINT: result line, patch saved (the TUI
  // keeps the default for them).
  process.on('SIGTERM', () => controller.abort('SIGTERM'));
  process.on('SIGHUP', () => controller.abort('SIGHUP'));
  const { runHeadless } = await import('./run-headless.js');
  return runHeadless({
    task,
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.effort ? { effort: flags.effort } : {}),
    yes: flags.yes === true,
    outputFormat: flags.outputFormat,
    continueLatest: flags.continue === true,
    ...(flags.resume ? { resume: flags.resume } : {}),
    ...(flags.maxTurns !== undefined ? { maxTurns: flags.maxTurns } : {}),
    ...(flags.timeout !== undefined ? { timeoutMs: flags.timeout } : {}),
    ...(flags.network !== undefined ? { network: flags.network } : {}),
    ...(flags.mcpConfig ? { mcpConfig: flags.mcpConfig } : {}),
    unsandboxed: flags.unsandboxed === true,
    cwd: process.cwd(),
    env: process.env,
    writers: writers(),
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
main(process.argv.slice(2)).then(
  (code) => exit(code),
  (err: unknown) => {
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
