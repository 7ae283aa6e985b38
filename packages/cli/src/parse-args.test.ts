import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from './exit-codes.js';
import { acceptsEdits, joinPrompt, parseArgs, planRun, sessionExtras, splitToolList, type ParsedArgs } from './parse-args.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Parsed, with what commander would have printed. */
function parse(...argv: string[]): ParsedArgs {
  let said = '';
  const r = parseArgs(argv, { writeOut: (s) => (said += s), writeErr: (s) => (said += s) });
  if (typeof r === 'number') throw new Error(`exit ${r}: ${said}`);
  return r;
}

/** Commander's own answer: the exit code and what it wrote. */
function refused(...argv: string[]): { code: number; said: string } {
  let said = '';
  const r = parseArgs(argv, { writeOut: (s) => (said += s), writeErr: (s) => (said += s) });
  if (typeof r !== 'number') throw new Error(`parsed: ${JSON.stringify(r)}`);
  return { code: r, said };
}

const tty = { stdinIsTTY: true, stdoutIsTTY: true };
const piped = { stdinIsTTY: false, stdoutIsTTY: false };

/** The UserError planRun throws (exit code and message). */
function planError(args: ParsedArgs, io = tty): UserError {
  try {
    planRun(args, io);
  } catch (err) {
    if (err instanceof UserError) return err;
    throw err;
  }
  throw new Error('planRun did not refuse');
}

describe('-p as Claude Code has it: a switch, the prompt positional or on stdin', () => {
  it('-p "task" (either order): headless with that prompt; stdin read only when it is not a terminal', () => {
    expect(planRun(parse('-p', 'fix the bug'), tty)).toEqual({ kind: 'headless', prompt: 'fix the bug', stdin: 'none' });
    expect(planRun(parse('fix the bug', '-p'), tty)).toEqual({ kind: 'headless', prompt: 'fix the bug', stdin: 'none' });
    expect(planRun(parse('--print', 'fix the bug', '--yes'), piped)).toEqual({ kind: 'headless', prompt: 'fix the bug', stdin: 'append' });
    expect(planRun(parse('-p', '@task.md'), tty)).toEqual({ kind: 'headless', prompt: '@task.md', stdin: 'none' });
  });

  it('-p without a prompt: stdin is the prompt; with a terminal there, a usage error (never "--yes" as the task)', () => {
    expect(planRun(parse('-p', '--yes'), piped)).toEqual({ kind: 'headless', stdin: 'prompt' });
    const err = planError(parse('-p', '--yes'));
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/^-p needs a prompt: give it after -p or on stdin \(infinity-code -p "fix the failing test"/);
    expect(parse('-p', '--yes').flags).toMatchObject({ print: true, yes: true });
  });

  it('without -p: a prompt opens the TUI with it as the first message; stdin piped without a prompt still runs headless', () => {
    expect(planRun(parse(), tty)).toEqual({ kind: 'interactive' });
    expect(planRun(parse('explain the build'), tty)).toEqual({ kind: 'interactive', firstMessage: 'explain the build' });
    expect(planRun(parse('--yes'), piped)).toEqual({ kind: 'headless', stdin: 'prompt' });
    // No terminal to draw on: the user is told to add -p.
    const err = planError(parse('explain the build'), { stdinIsTTY: true, stdoutIsTTY: false });
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain('to run it headless, add -p (infinity-code -p "explain the build")');
  });

  it('an unquoted prompt is refused with the quoted one to type instead', () => {
    const err = planError(parse('-p', 'fix', 'the', 'bug'));
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe('Unexpected argument "the": the prompt is one argument. Put it in quotes: infinity-code -p "fix the bug".');
  });

  it('-r takes an optional id: alone it asks the TUI for its picker, headless it is a usage error', () => {
    expect(parse('-r').flags.resume).toBe(true);
    expect(parse('-r', 'abc123').flags.resume).toBe('abc123');
    expect(parse('-r', '-p', 'go on').flags).toMatchObject({ resume: true, print: true });
    expect(planRun(parse('-r'), tty)).toEqual({ kind: 'interactive' });
    const err = planError(parse('-r', '-p', 'go on'));
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/-r without a session id .* headless, give the id \(-r <id>\)/);
    expect(planRun(parse('-p', 'go on', '-r', 'abc'), tty)).toMatchObject({ kind: 'headless', prompt: 'go on' });
  });

  it('joins the prompt and stdin as Claude Code does: the prompt, a blank line, the piped text', () => {
    expect(joinPrompt('explain', 'line 1\nline 2\n')).toBe('explain\n\nline 1\nline 2\n');
    expect(joinPrompt(undefined, 'the task from stdin\n')).toBe('the task from stdin\n');
    expect(joinPrompt('explain', '')).toBe('explain');
    expect(joinPrompt('explain', undefined)).toBe('explain');
    expect(joinPrompt('explain', ' \n')).toBe('explain');
    expect(() => joinPrompt(undefined, '  \n')).toThrow(/^The task is empty/);
    expect(() => joinPrompt('  ', undefined)).toThrow(/^The task is empty/);
  });
});

describe("Claude Code's other flags", () => {
  it('--allowedTools and --disallowedTools take lists, space or comma separated, in either spelling; patterns stay whole', () => {
    const f = parse('-p', 'x', '--allowedTools', 'Read,Edit', 'Bash(git diff:*, git log:*)', '--disallowed-tools', 'WebFetch', '--allowed-tools', 'Grep').flags;
    expect(splitToolList(f.allowedTools)).toEqual(['Read', 'Edit', 'Bash(git diff:*, git log:*)', 'Grep']);
    expect(splitToolList(f.disallowedTools)).toEqual(['WebFetch']);
    expect(splitToolList(['Read Edit  ,Write'])).toEqual(['Read', 'Edit', 'Write']);
    // A variadic option takes what follows: the prompt goes first (as with Claude Code).
    expect(parse('-p', 'the task', '--allowedTools', 'Read').operands).toEqual(['the task']);
  });

  it('--permission-mode acceptEdits|bypassPermissions and --dangerously-skip-permissions mean --yes; plan and default do not', () => {
    expect(acceptsEdits(parse('--yes').flags)).toBe(true);
    expect(acceptsEdits(parse('--permission-mode', 'acceptEdits').flags)).toBe(true);
    expect(acceptsEdits(parse('--permission-mode', 'bypassPermissions').flags)).toBe(true);
    expect(acceptsEdits(parse('--dangerously-skip-permissions').flags)).toBe(true);
    expect(acceptsEdits(parse('--permission-mode', 'plan').flags)).toBe(false);
    expect(acceptsEdits(parse('--permission-mode', 'default').flags)).toBe(false);
    expect(acceptsEdits(parse().flags)).toBe(false);
    expect(sessionExtras(parse('--dangerously-skip-permissions').flags, '/')).toEqual({ permissionMode: 'bypassPermissions' });
    const bad = refused('--permission-mode', 'yolo');
    expect(bad.code).toBe(2);
    expect(bad.said).toContain('Allowed choices are default, acceptEdits, bypassPermissions, plan.');
  });

  it('fills the session request from the flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ic-args-'));
    dirs.push(dir);
    const f = parse(
      '-p', 'x',
      '--system-prompt', 'You are terse.',
      '--append-system-prompt', 'Answer in French.',
      '--disallowedTools', 'execute_command',
      '--permission-mode', 'plan',
      '--add-dir', dir, '.',
      '--session-id', '123E4567-E89B-42D3-A456-426614174000',
      '--fallback-model', 'haiku',
      '--max-budget-usd', '$0.25',
    ).flags;
    expect(sessionExtras(f, dir)).toEqual({
      systemPrompt: 'You are terse.',
      appendSystemPrompt: 'Answer in French.',
      disallowedTools: ['execute_command'],
      permissionMode: 'plan',
      addDirs: [dir, dir],
      sessionId: '123e4567-e89b-42d3-a456-426614174000',
      fallbackModel: 'haiku',
      maxBudgetUsd: 0.25,
    });
    expect(sessionExtras(parse('-p', 'x').flags, dir)).toEqual({});
  });

  it('--add-dir must name directories that exist', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ic-args-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'a.txt'), 'a');
    expect(() => sessionExtras(parse('--add-dir', 'missing').flags, dir)).toThrow(`--add-dir missing: ${join(dir, 'missing')} does not exist.`);
    expect(() => sessionExtras(parse('--add-dir', 'a.txt').flags, dir)).toThrow(`--add-dir a.txt: ${join(dir, 'a.txt')} is not a directory.`);
  });

  it('--session-id must be a UUID, --max-budget-usd an amount above 0 (usage errors)', () => {
    for (const [args, message] of [
      [['--session-id', 'my-session'], /--session-id.*must be a UUID/],
      [['--max-budget-usd', '0'], /--max-budget-usd.*must be an amount in US dollars above 0/],
      [['--max-budget-usd', 'lots'], /--max-budget-usd.*must be an amount/],
      [['--input-format', 'xml'], /Allowed choices are text, stream-json/],
    ] as const) {
      const r = refused('-p', 'x', ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.said).toMatch(message);
    }
    const both = planError(parse('-c', '--session-id', '123e4567-e89b-42d3-a456-426614174000'));
    expect(both.message).toMatch(/--session-id names a new session: it does not go with -c or -r/);
  });

  it('--input-format stream-json and --include-partial-messages need -p and --output-format stream-json', () => {
    const streamed = parse('-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--include-partial-messages', '--verbose');
    expect(planRun(streamed, piped)).toEqual({ kind: 'headless', stdin: 'turns' });
    expect(planError(parse('-p', '--input-format', 'stream-json'), piped).message).toBe('--input-format stream-json needs --output-format stream-json.');
    expect(planError(parse('-p', 'x', '--include-partial-messages', '--output-format', 'json'), piped).message).toBe(
      '--include-partial-messages needs --output-format stream-json.',
    );
    expect(planError(parse('--include-partial-messages', '--output-format', 'stream-json')).message).toMatch(/^--include-partial-messages is for headless runs: add -p/);
    expect(planError(parse('-p', 'x', '--input-format', 'stream-json', '--output-format', 'stream-json'), piped).message).toMatch(
      /prompts come on stdin, as JSON lines: leave the prompt argument out/,
    );
    expect(planError(parse('-p', '--input-format', 'stream-json', '--output-format', 'stream-json'), tty).message).toMatch(/stdin, which is a terminal here/);
  });

  it('--timeout and --max-budget-usd limit headless runs only', () => {
    expect(planError(parse('--timeout', '5m')).message).toMatch(/^--timeout is for headless runs: add -p/);
    expect(planError(parse('--max-budget-usd', '1')).message).toMatch(/^--max-budget-usd is for headless runs: add -p/);
  });

  it('--mcp-config takes several files or JSON strings, and adds to them when repeated', () => {
    const f = parse('-p', 'x', '--mcp-config', 'a.json', '{"mcpServers":{}}', '--strict-mcp-config', '--mcp-config', 'b.json').flags;
    expect(f.mcpConfig).toEqual(['a.json', '{"mcpServers":{}}', 'b.json']);
    expect(f.strictMcpConfig).toBe(true);
  });

  it('--help lists the new flags with what they do', () => {
    const { code, said } = refused('--help');
    expect(code).toBe(0);
    for (const flag of [
      '-p, --print',
      '--verbose',
      '--append-system-prompt <text>',
      '--system-prompt <text>',
      '--allowedTools <tools...>',
      '--disallowedTools <tools...>',
      '--permission-mode <mode>',
      '--add-dir <dirs...>',
      '--max-budget-usd <amount>',
      '--session-id <uuid>',
      '--fallback-model <id>',
      '--input-format <format>',
      '--include-partial-messages',
      '--mcp-config <configs...>',
      '--strict-mcp-config',
      '-r, --resume [session]',
    ]) {
      expect(said, flag).toContain(flag);
    }
    // The camel-case spellings' aliases work without cluttering the help.
    expect(said).not.toContain('--allowed-tools');
  });
});
