// The command line as Claude Code's scripts write it: the flags, the prompt, and what kind of run
// they ask for. No I/O but reading the arguments (and, for --add-dir, that a directory exists):
// cli.ts reads stdin and starts the run. Light: --help and the TUI's first frame load it.
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_MODEL, EFFORTS, type Effort } from '@infinity-code/runtime/models';
import { RETRY_KEYS } from './config.js';
import { parseDuration } from './duration.js';
import { EXIT, UserError } from './exit-codes.js';
import { parseNetworkFlag, type NetworkSetting } from './sandbox-config.js';
import type { SessionExtras } from './session-setup.js';

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

export const PERMISSION_MODES = ['default', 'acceptEdits', 'bypassPermissions', 'plan'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export interface Flags {
  /** -p: headless (a switch, as Claude Code's; the prompt is the positional argument or stdin). */
  print?: boolean;
  yes?: boolean;
  outputFormat: 'text' | 'json' | 'stream-json';
  inputFormat: 'text' | 'stream-json';
  verbose?: boolean;
  includePartialMessages?: boolean;
  model?: string;
  fallbackModel?: string;
  effort?: Effort;
  continue?: boolean;
  /** -r alone: `true` (the TUI lists the sessions to pick from). */
  resume?: string | true;
  sessionId?: string;
  maxTurns?: number;
  maxBudgetUsd?: number;
  timeout?: number;
  unsandboxed?: boolean;
  network?: NetworkSetting;
  mcpConfig?: string[];
  strictMcpConfig?: boolean;
  systemPrompt?: string;
  appendSystemPrompt?: string;
  allowedTools?: string[];
  disallowedTools?: string[];
  permissionMode?: PermissionMode;
  dangerouslySkipPermissions?: boolean;
  addDir?: string[];
  demo?: boolean;
  debug?: boolean;
}

export interface ParsedArgs {
  flags: Flags;
  /** The positional arguments: the prompt, and whatever else was typed (an error, see planRun). */
  operands: string[];
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

function dollars(value: string): number {
  const n = Number(value.trim().replace(/^\$/, ''));
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be an amount in US dollars above 0, like 0.50 or 5.');
  return n;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuid(value: string): string {
  if (!UUID.test(value)) throw new InvalidArgumentError('must be a UUID, like 123e4567-e89b-42d3-a456-426614174000 (uuidgen makes one).');
  // Lower case: sessions are found by id (and prefix), and `uuidgen` on macOS writes upper case.
  return value.toLowerCase();
}

/** Each value of a variadic option taken into a list that grows when the option is repeated. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * The rest of what a user or a script needs to know, after the options: where settings come from
 * and what the exit code means. The codes are taken from EXIT so the two can't drift apart.
 */
const HELP_FOOTER = `
Examples:
  infinity-code                        the terminal UI
  infinity-code "fix the failing test" the terminal UI, with that first message
  infinity-code -p "fix the failing test" --yes
                                       headless: the answer on stdout, the
                                       changes applied to the working tree
  git diff | infinity-code -p "review this"
                                       stdin is appended to the prompt
  infinity-code -p "explain src/a.ts" --output-format stream-json --verbose
  infinity-code -c -p "now add tests"  continue the latest session

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
  .mcp.json            the repository's MCP servers (started once you approve
                       them)
  .infinity/commands/, .claude/commands/
                       project commands: name.md is /name (sub/name.md is
                       /sub:name), in the TUI and as -p "/name args"

Exit codes:
  ${EXIT.ok}    done
  ${EXIT.failed}    failed: a model or tool error, or git failing on the repository
  ${EXIT.usage}    usage error: a bad flag or argument, or a folder that is no project
       (/, your home directory, or too many files outside a git repository)
  ${EXIT.config}    configuration or authentication error: no API key or a rejected
       one, an ANTHROPIC_BASE_URL that can't be reached, an invalid config
       file, a retired model, git not installed
  ${EXIT.unapplied}    changes left unapplied (headless without --yes): the patch is
       saved in .infinity/patches/
  ${EXIT.limit}    a limit was reached (--max-turns, --max-budget-usd, --timeout)
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

function program(output: { writeOut(s: string): void; writeErr(s: string): void }): Command {
  return (
    new Command()
      .name('infinity-code')
      .description('A terminal coding agent on a time-sliced agent runtime. Without -p it opens the terminal UI.')
      .argument('[prompt]', 'the task: with -p, run it headless; without, the terminal UI starts with it as the first message')
      .version(pkg.version, '-v, --version')
      .option(
        '-p, --print',
        'headless, as Claude Code\'s -p: the prompt is the argument (-p "fix it"; "@file" alone reads it from a file) or stdin (appended to the argument when both are given); the answer on stdout',
      )
      .option('--yes', 'accept every diff automatically and apply the result to the working tree')
      .addOption(
        new Option('--output-format <format>', 'headless output: the answer (text), the result object (json), or a JSON object per line (stream-json)')
          .choices(['text', 'json', 'stream-json'])
          .default('text'),
      )
      .addOption(
        new Option('--input-format <format>', 'headless input: the prompt (text), or user messages as JSON lines on stdin (stream-json; needs --output-format stream-json)')
          .choices(['text', 'stream-json'])
          .default('text'),
      )
      .option('--verbose', 'headless text output: the progress (tool calls, results, retries, notes) on stderr; accepted with every format')
      .option('--include-partial-messages', 'with --output-format stream-json: a stream_event line per piece of text as it streams')
      .option(
        '--model <id>',
        `model id or alias (opus, sonnet, haiku, fable); default: ANTHROPIC_MODEL, else the config's "model", else ${DEFAULT_MODEL}`,
      )
      .option('--fallback-model <id>', 'the model to switch to when the model is overloaded or not found')
      .addOption(
        new Option('--effort <level>', "how hard the model works (output_config.effort); default: the config's \"effort\", else the model's own")
          .choices(EFFORTS),
      )
      .option('--system-prompt <text>', "instead of Infinity Code's own instructions (the environment and the project's instructions stay)")
      .option('--append-system-prompt <text>', 'added at the end of the system prompt')
      .option(
        '--allowedTools <tools...>',
        'tools that change things (edits, commands, child threads, MCP tools) run only when these allow them; reads always run (names separated by spaces or commas; Claude Code\'s names and patterns like "Bash(git diff:*)" too)',
        collect,
      )
      .addOption(new Option('--allowed-tools <tools...>').argParser(collect).hideHelp())
      .option(
        '--disallowedTools <tools...>',
        'these tools are not offered to the model at all (names separated by spaces or commas); a pattern like "Bash(rm:*)" refuses the calls it matches',
        collect,
      )
      .addOption(new Option('--disallowed-tools <tools...>').argParser(collect).hideHelp())
      .addOption(
        new Option('--permission-mode <mode>', 'acceptEdits and bypassPermissions mean --yes; plan: read-only, nothing is changed')
          .choices(PERMISSION_MODES),
      )
      .option('--dangerously-skip-permissions', 'the same as --yes (every change is still made in the sandbox first)')
      .option(
        '--add-dir <dirs...>',
        "more directories the agent may read (its commands, and read_file, grep and list_files by absolute path); read-only, unless also in your config's sandbox.writable",
        collect,
      )
      .option('-c, --continue', 'continue the latest session in this repository')
      .option('-r, --resume [session]', 'resume a session by id (or unique prefix); without one, the terminal UI lists the sessions to pick from')
      .option('--session-id <uuid>', 'the id of the session started now (a UUID no session of the project has)', uuid)
      .option('--max-turns <n>', 'stop a thread after this many model calls (exit code 5)', positiveInt)
      .option('--max-budget-usd <amount>', "headless: stop the run once its model calls cost this much in US dollars (exit code 5)", dollars)
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
        '--mcp-config <configs...>',
        'MCP servers from these files or JSON strings (.mcp.json format, {"mcpServers": {...}}); they start without asking',
        collect,
      )
      .option('--strict-mcp-config', "only the --mcp-config servers: not the repository's .mcp.json nor your config's")
      .option(
        '--unsandboxed',
        "let commands run where the sandbox can't confine them (otherwise headless refuses them and the TUI asks before each)",
      )
      .option('--demo', 'run a scripted demonstration in a throwaway repository (no API key needed)')
      .option('--debug', 'show stack traces of unexpected errors')
      .addHelpText('after', HELP_FOOTER)
      // Extra words get our own message (quote the prompt), not commander's generic one.
      .allowExcessArguments(true)
      .exitOverride()
      .configureOutput(output)
  );
}

/** The flags and operands, or the exit code when commander answered itself (--help, --version, a bad flag). */
export function parseArgs(
  argv: readonly string[],
  output: { writeOut(s: string): void; writeErr(s: string): void } = {
    writeOut: (s) => process.stdout.write(s),
    writeErr: (s) => process.stderr.write(s),
  },
): ParsedArgs | number {
  const cmd = program(output);
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw err;
  }
  return { flags: cmd.opts<Flags>(), operands: [...cmd.args] };
}

/** What a command line asks for. */
export type RunPlan =
  | { kind: 'demo' }
  | { kind: 'interactive'; firstMessage?: string }
  | {
      kind: 'headless';
      /** The positional prompt, as typed (`@file` not read yet). */
      prompt?: string;
      /**
       * What stdin holds: nothing to read (a terminal, or the prompt came alone from one), the
       * prompt itself, text to append to the prompt, or user turns as JSON lines.
       */
      stdin: 'none' | 'prompt' | 'append' | 'turns';
    };

const EXAMPLES = 'infinity-code -p "fix the failing test", or on stdin: git diff | infinity-code -p "review this"';

/**
 * The kind of run, from the arguments and whether stdin and stdout are terminals. Claude Code's
 * rules: -p is headless, its prompt the argument and/or stdin; without -p a prompt opens the
 * terminal UI with it as the first message. Ours kept: a task piped in without -p runs headless.
 * Throws UserError (exit 2) for what can't be run as asked, before anything starts.
 */
export function planRun(args: ParsedArgs, io: { stdinIsTTY: boolean; stdoutIsTTY: boolean }): RunPlan {
  const f = args.flags;
  const [prompt, ...extra] = args.operands;
  if (extra.length > 0) {
    throw new UserError(
      `Unexpected argument "${extra[0]}": the prompt is one argument. Put it in quotes: infinity-code -p "${args.operands.join(' ')}".`,
      EXIT.usage,
    );
  }
  if (f.demo) return { kind: 'demo' };
  if (f.sessionId !== undefined && (f.continue || f.resume !== undefined)) {
    throw new UserError('--session-id names a new session: it does not go with -c or -r, which continue an existing one.', EXIT.usage);
  }
  const headless = f.print === true || (prompt === undefined && !io.stdinIsTTY);
  const needsPrint = (flag: string) => new UserError(`${flag} is for headless runs: add -p (${EXAMPLES}).`, EXIT.usage);
  const streamed = (flag: string) => new UserError(`${flag} needs --output-format stream-json.`, EXIT.usage);
  if (f.inputFormat === 'stream-json') {
    if (!headless) throw needsPrint('--input-format stream-json');
    if (f.outputFormat !== 'stream-json') throw streamed('--input-format stream-json');
    if (prompt !== undefined) {
      throw new UserError('With --input-format stream-json the prompts come on stdin, as JSON lines: leave the prompt argument out.', EXIT.usage);
    }
    if (io.stdinIsTTY) throw new UserError('--input-format stream-json reads user messages from stdin, which is a terminal here: pipe them in.', EXIT.usage);
  }
  if (f.includePartialMessages) {
    if (!headless) throw needsPrint('--include-partial-messages');
    if (f.outputFormat !== 'stream-json') throw streamed('--include-partial-messages');
  }
  if (!headless) {
    if (f.timeout !== undefined) throw needsPrint('--timeout');
    if (f.maxBudgetUsd !== undefined) throw needsPrint('--max-budget-usd');
    if (prompt === undefined) return { kind: 'interactive' };
    if (!io.stdinIsTTY || !io.stdoutIsTTY) {
      throw new UserError(
        `A prompt without -p opens the terminal UI, which needs a terminal: to run it headless, add -p (infinity-code -p ${JSON.stringify(prompt)}).`,
        EXIT.usage,
      );
    }
    return { kind: 'interactive', firstMessage: prompt };
  }
  if (f.resume === true) {
    throw new UserError('-r without a session id lists the sessions in the terminal UI: headless, give the id (-r <id>), or continue the latest with -c.', EXIT.usage);
  }
  if (f.inputFormat === 'stream-json') return { kind: 'headless', stdin: 'turns' };
  if (prompt !== undefined) return { kind: 'headless', prompt, stdin: io.stdinIsTTY ? 'none' : 'append' };
  if (io.stdinIsTTY) throw new UserError(`-p needs a prompt: give it after -p or on stdin (${EXAMPLES}).`, EXIT.usage);
  return { kind: 'headless', stdin: 'prompt' };
}

/**
 * The task from the prompt argument and stdin, as Claude Code joins them: the prompt, a blank
 * line, then what came on stdin. Throws UserError when there is nothing to do.
 */
export function joinPrompt(prompt: string | undefined, stdin: string | undefined): string {
  const piped = stdin !== undefined && stdin.trim() !== '' ? stdin : undefined;
  const task = prompt !== undefined && piped !== undefined ? `${prompt}\n\n${piped}` : (prompt ?? piped ?? '');
  if (task.trim() === '') throw new UserError(`The task is empty: say what you want done (${EXAMPLES}).`, EXIT.usage);
  return task;
}

/** Whether the run applies its changes: --yes, or Claude Code's ways of saying it. */
export function acceptsEdits(f: Flags): boolean {
  return f.yes === true || f.dangerouslySkipPermissions === true || f.permissionMode === 'acceptEdits' || f.permissionMode === 'bypassPermissions';
}

/**
 * `--allowedTools "Read,Edit" "Bash(git diff:*)"`: names separated by commas or spaces, except
 * inside a pattern's parentheses (`Bash(npm run test:*, lint)` stays one entry).
 */
export function splitToolList(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const out: string[] = [];
  for (const value of values) {
    let depth = 0;
    let word = '';
    for (const ch of value) {
      if (ch === '(') depth++;
      else if (ch === ')') depth = Math.max(0, depth - 1);
      if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
        if (word !== '') out.push(word);
        word = '';
      } else word += ch;
    }
    if (word !== '') out.push(word);
  }
  return out;
}

/**
 * Claude Code's flags as the session request carries them (see SessionExtras). --add-dir paths are
 * resolved against `cwd` and must be directories that exist (usage error otherwise).
 */
export function sessionExtras(f: Flags, cwd: string): SessionExtras {
  const allowedTools = splitToolList(f.allowedTools);
  const disallowedTools = splitToolList(f.disallowedTools);
  const permissionMode = f.permissionMode ?? (f.dangerouslySkipPermissions ? 'bypassPermissions' : undefined);
  const addDirs = f.addDir?.map((d) => {
    const dir = resolve(cwd, d);
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (!stat) throw new UserError(`--add-dir ${d}: ${dir} does not exist.`, EXIT.usage);
    if (!stat.isDirectory()) throw new UserError(`--add-dir ${d}: ${dir} is not a directory.`, EXIT.usage);
    return dir;
  });
  return {
    ...(f.systemPrompt !== undefined ? { systemPrompt: f.systemPrompt } : {}),
    ...(f.appendSystemPrompt !== undefined ? { appendSystemPrompt: f.appendSystemPrompt } : {}),
    ...(allowedTools ? { allowedTools } : {}),
    ...(disallowedTools ? { disallowedTools } : {}),
    ...(permissionMode ? { permissionMode } : {}),
    ...(addDirs ? { addDirs } : {}),
    ...(f.sessionId !== undefined ? { sessionId: f.sessionId } : {}),
    ...(f.fallbackModel !== undefined ? { fallbackModel: f.fallbackModel } : {}),
    ...(f.maxBudgetUsd !== undefined ? { maxBudgetUsd: f.maxBudgetUsd } : {}),
  };
}
