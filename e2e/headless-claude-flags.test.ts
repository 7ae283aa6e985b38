// Claude Code's headless command line, unchanged, against the built CLI and the fake Messages API:
// -p as a switch with the prompt positional or on stdin, the final answer alone on stdout, and
// the flags scripts written for `claude -p` pass (system prompt, session id, budget, fallback
// model, stream-json input, partial messages, MCP configs).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { STDIO_FIXTURE } from '@infinity-code/mcp/testing';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, runCli, startCli, tempDir } from './support/cli.js';
import { toolResults, type Msg } from './support/model.js';
import { events } from './support/run.js';
import { TmuxScreen } from './support/tmux.js';

let api: FakeMessagesApi;
let brain: FakeBrain = () => ({ text: 'No brain.' });
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: (body, i) => brain(body, i) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

const env = (extra: Record<string, string> = {}) => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, ...extra });

/** The text of each user message of a request (tool results left out), in order. */
function userTexts(body: FakeRequestBody): string[] {
  return ((body.messages ?? []) as Msg[])
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')))
    .filter((t) => t !== '');
}

/** The system prompt of a request as one string. */
function systemText(body: FakeRequestBody): string {
  const s = body.system;
  return typeof s === 'string' ? s : (s as Array<{ text: string }>).map((b) => b.text).join('');
}

/** The requests a run made: those after `from`. */
const since = (from: number) => api.requests.slice(from).filter((q) => q.path.endsWith('/messages'));

const toolNames = (body: FakeRequestBody) => (body.tools ?? []).map((t) => (t as { name: string }).name);

describe('-p as Claude Code has it', () => {
  it('a switch with the prompt as the argument, before or after it: stdout is the final answer alone, stderr quiet', async () => {
    brain = () => ({ text: 'Hello there.' });
    for (const args of [['-p', 'Say hello.'], ['Say hello.', '--print', '--verbose']]) {
      const from = api.requests.length;
      const r = await runCli(args, { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('Hello there.\n');
      expect(r.stderr).toBe('');
      expect(since(from).map((q) => userTexts(q.body))).toEqual([['Say hello.']]);
    }
  });

  it('piped stdin is appended to the prompt after a blank line; stdin alone is the prompt', async () => {
    brain = () => ({ text: 'Explained.' });
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const log = join(tempDir(), 'build.log');
    writeFileSync(log, 'error TS2322: bad type\n  at line 3\n');
    let from = api.requests.length;
    const both = await runCli(['-p', 'explain'], { cwd: repo, env: env(), stdinFile: log });
    expect(both.code, both.stderr).toBe(0);
    expect(since(from)[0].body.messages).toHaveLength(1);
    expect(userTexts(since(from)[0].body)).toEqual(['explain\n\nerror TS2322: bad type\n  at line 3\n']);
    from = api.requests.length;
    const alone = await runCli(['-p'], { cwd: repo, env: env(), stdinFile: log });
    expect(alone.code, alone.stderr).toBe(0);
    expect(userTexts(since(from)[0].body)).toEqual(['error TS2322: bad type\n  at line 3\n']);
    expect(alone.stdout).toBe('Explained.\n');
  });

  it('a stdin pipe nobody writes nor closes: -p "task" goes on without it after 3 s, saying so', async () => {
    brain = () => ({ text: 'Went on.' });
    const fifo = join(tempDir(), 'stdin');
    execFileSync('mkfifo', [fifo]);
    // Held open for writing (and never written): the CLI's stdin never ends.
    const writer = openSync(fifo, 'r+');
    try {
      const from = api.requests.length;
      const r = await runCli(['-p', 'Go on.'], { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env(), stdinFile: fifo });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('Went on.\n');
      expect(r.stderr).toBe(
        'infinity-code: nothing came on stdin within 3s; going on without it (run with stdin from /dev/null to skip the wait).\n',
      );
      expect(userTexts(since(from)[0].body)).toEqual(['Go on.']);

    } finally {
      closeSync(writer);
    }
  });

  it('-p --yes with no prompt anywhere: exit 2 with what to do, and no model request ("--yes" is never the task)', async () => {
    const from = api.requests.length;
    const r = await runCli(['-p', '--yes'], { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'infinity-code: The task is empty: say what you want done (infinity-code -p "fix the failing test", or on stdin: git diff | infinity-code -p "review this").\n',
    );
    expect(r.stdout).toBe('');
    expect(api.requests.length).toBe(from);
  });

  it('-p --yes in a terminal with no prompt: exit 2 at once, nothing read or sent', async () => {
    const from = api.requests.length;
    const repo = gitRepo({ 'a.txt': 'a\n' });
    // A script keeps the pane (and what was said there) until the test has read it.
    const script = join(tempDir(), 'run.sh');
    writeFileSync(script, `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} -p --yes\necho "exit=$?"\nread x\n`);
    const screen = TmuxScreen.start(['sh', script], {
      cwd: repo,
      env: { ...env(), HOME: tempDir() },
    });
    try {
      const shown = await screen.waitFor(/exit=\d+/);
      expect(shown).toContain('exit=2');
      expect(shown.replace(/\n/g, '')).toContain('-p needs a prompt: give it after -p or on stdin');
    } finally {
      screen.kill();
    }
    expect(api.requests.length).toBe(from);
  });

  it('a prompt without -p opens the terminal UI with it as the first message', async () => {
    brain = () => ({ text: 'Answer in the TUI.' });
    const from = api.requests.length;
    const repo = gitRepo({ 'a.txt': 'a\n' });
    // One word: the tmux helper passes each argument as it is, quotes and all.
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN, 'Summarise.'], {
      cwd: repo,
      env: { ...env(), HOME: tempDir(), TERM: 'xterm-256color' },
    });
    try {
      await screen.waitFor(/Answer in the TUI\./);
    } finally {
      screen.kill();
    }
    expect(since(from).map((q) => userTexts(q.body))).toEqual([['Summarise.']]);
  });

  it('text output: the words before tool calls never reach stdout; --verbose tells them and the calls on stderr', async () => {
    // A model outside the table answers as 2025 models did: words before a call stay text.
    brain = (body) =>
      toolResults((body.messages ?? []) as Msg[]).size === 0
        ? { text: 'Let me read a.txt first.', toolUse: { name: 'read_file', input: { path: 'a.txt' } } }
        : { text: 'It says alpha.' };
    const repo = gitRepo({ 'a.txt': 'alpha\n' });
    const quiet = await runCli(['-p', 'What does a.txt say?', '--model', 'claude-test-1'], { cwd: repo, env: env() });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toBe('It says alpha.\n');
    expect(quiet.stderr).toBe('');
    const verbose = await runCli(['-p', 'What does a.txt say?', '--model', 'claude-test-1', '--verbose'], { cwd: repo, env: env() });
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stdout).toBe('It says alpha.\n');
    const lines = verbose.stderr.split('\n');
    const said = lines.indexOf('Let me read a.txt first.');
    expect(said).toBeGreaterThanOrEqual(0);
    expect(lines.findIndex((l) => l.startsWith('● ') && l.includes('a.txt'))).toBeGreaterThan(said);
    expect(verbose.stderr).not.toContain('It says alpha.');
  });

  it('--verbose is accepted with stream-json, whose lines stay valid', async () => {
    brain = () => ({ text: 'Streamed.' });
    const r = await runCli(['-p', 'Go.', '--output-format', 'stream-json', '--verbose'], { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env() });
    expect(r.code, r.stderr).toBe(0);
    const out = events(r.stdout);
    expect(out[0]).toMatchObject({ type: 'system', subtype: 'init' });
    expect(out.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Streamed.' });
  });
});

describe("Claude Code's flags", () => {
  it('--append-system-prompt ends the system prompt; --system-prompt replaces our instructions, the environment and AGENTS.md stay', async () => {
    brain = () => ({ text: 'Ok.' });
    const repo = gitRepo({ 'a.txt': 'a\n', 'AGENTS.md': 'Use tabs.\n' });
    let from = api.requests.length;
    const appended = await runCli(['-p', 'Hi.', '--append-system-prompt', 'Always answer in French.'], { cwd: repo, env: env() });
    expect(appended.code, appended.stderr).toBe(0);
    const withAppend = systemText(since(from)[0].body);
    expect(withAppend.startsWith('You are Infinity Code')).toBe(true);
    expect(withAppend).toContain('Use tabs.\n\nAlways answer in French.\n\nThe root thread ID is');
    from = api.requests.length;
    const replaced = await runCli(['-p', 'Hi.', '--system-prompt', 'You are a terse reviewer.'], { cwd: repo, env: env() });
    expect(replaced.code, replaced.stderr).toBe(0);
    const own = systemText(since(from)[0].body);
    expect(own.startsWith('You are a terse reviewer.\n\n')).toBe(true);
    expect(own).not.toContain('You are Infinity Code');
    expect(own).toContain(repo);
    expect(own).toContain('Project instructions (from AGENTS.md):\n\nUse tabs.');
  });

  it('--session-id is the session id, resumable with -r; an id the project has already is a usage error', async () => {
    brain = (body) => ({ text: `Turn ${userTexts(body).length}.` });
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const id = '0d5e3c6a-9f1b-4c2d-8e7f-123456789abc';
    const first = await runCli(['-p', 'First.', '--session-id', id, '--output-format', 'json'], { cwd: repo, env: env() });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ session_id: id, result: 'Turn 1.' });
    const sessions = JSON.parse(readFileSync(join(repo, '.infinity', 'sessions.json'), 'utf8')) as Array<{ id: string }>;
    expect(sessions.map((s) => s.id)).toEqual([id]);
    // The request names the thread by it too.
    const from = api.requests.length;
    const again = await runCli(['-p', 'Second.', '-r', id, '--output-format', 'json'], { cwd: repo, env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ session_id: id, result: 'Turn 2.' });
    expect(systemText(since(from)[0].body)).toContain(`The root thread ID is ${id}.`);
    const taken = await runCli(['-p', 'Third.', '--session-id', id], { cwd: repo, env: env() });
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain(`--session-id ${id}: this project has a session with that id already. Continue it with -r ${id}`);
    const bad = await runCli(['-p', 'x', '--session-id', 'not-a-uuid'], { cwd: repo, env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--session-id.*must be a UUID/);
  });

  it('--max-budget-usd stops the run once its cost reaches the budget: exit 5, subtype error_max_budget_usd', async () => {
    // Every reply costs about a dollar on Sonnet 5.5 ($10 per million output tokens) and calls a tool.
    brain = () => ({ toolUse: { name: 'list_files', input: {} }, usage: { output_tokens: 100_000 } });
    const from = api.requests.length;
    const r = await runCli(['-p', 'Look around forever.', '--max-budget-usd', '1.5', '--output-format', 'json'], { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env() });
    expect(r.code, r.stderr).toBe(5);
    const result = JSON.parse(r.stdout) as { subtype: string; total_cost_usd: number; exit_code: number; is_error: boolean; status: string };
    expect(result).toMatchObject({ subtype: 'error_max_budget_usd', exit_code: 5, is_error: true, status: 'limit' });
    expect(result.total_cost_usd).toBeGreaterThanOrEqual(1.5);
    expect(result.total_cost_usd).toBeLessThan(2.5);
    expect(since(from)).toHaveLength(2);
    expect((result as unknown as { errors: string[] }).errors).toEqual([expect.stringMatching(/^The run reached its budget \(--max-budget-usd 1\.5\) at \$\d/)]);
  });

  it('--fallback-model takes over when the model is overloaded, for the rest of the run', async () => {
    brain = (body) => (body.model === 'claude-opus-5-5' ? { status: 529 } : { text: `Answered by ${body.model}.` });
    const from = api.requests.length;
    const r = await runCli(['-p', 'Hi.', '--model', 'opus', '--fallback-model', 'haiku', '--output-format', 'stream-json', '--verbose'], {
      cwd: gitRepo({ 'a.txt': 'a\n' }),
      env: env({ INFINITY_CODE_RETRY: '{"baseDelayMs": 1, "maxDelayMs": 2}' }),
    });
    expect(r.code, r.stderr).toBe(0);
    const out = events(r.stdout);
    const result = out.at(-1) as unknown as { result: string; modelUsage: Record<string, unknown> };
    expect(result.result).toBe('Answered by claude-haiku-5-5.');
    // Priced and told as the model that answered.
    expect(Object.keys(result.modelUsage)).toEqual(['claude-haiku-5-5']);
    expect(out.filter((l) => l.type === 'assistant').map((l) => (l.message as { model: string }).model)).toEqual(['claude-haiku-5-5']);
    expect(since(from).map((q) => [q.body.model, q.status])).toEqual([
      ['claude-opus-5-5', 529],
      ['claude-opus-5-5', 529],
      ['claude-opus-5-5', 529],
      ['claude-haiku-5-5', 200],
    ]);
    expect(r.stderr).toContain(
      'infinity-code: claude-opus-5-5 was overloaded 3 times in a row: switched from claude-opus-5-5 to the fallback model claude-haiku-5-5 (--fallback-model) for the rest of the session.',
    );
    const same = await runCli(['-p', 'Hi.', '--model', 'haiku', '--fallback-model', 'claude-haiku-5-5'], { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env() });
    expect(same.code).toBe(2);
    expect(same.stderr).toContain("is the session's model (claude-haiku-5-5) already");
  });

  it('--input-format stream-json: each user line is a turn of the session, answered before the next is sent', async () => {
    brain = (body) => ({ text: `Answer to ${userTexts(body).at(-1)}` });
    const input = join(tempDir(), 'turns.jsonl');
    writeFileSync(
      input,
      [
        JSON.stringify({ type: 'user', message: { role: 'user', content: 'First question.' } }),
        JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'Second question.' }] } }),
        '',
      ].join('\n'),
    );
    const from = api.requests.length;
    const r = await runCli(['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose'], {
      cwd: gitRepo({ 'a.txt': 'a\n' }),
      env: env(),
      stdinFile: input,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(since(from).map((q) => userTexts(q.body))).toEqual([['First question.'], ['First question.', 'Second question.']]);
    const out = events(r.stdout);
    const answers = out.filter((l) => l.type === 'assistant').map((l) => (l.message as { content: Array<{ text?: string }> }).content.at(-1)?.text);
    expect(answers).toEqual(['Answer to First question.', 'Answer to Second question.']);
    // A result after each turn, then the run's own (its changes) once stdin ended.
    expect(out.filter((l) => l.type === 'result').map((l) => l.result)).toEqual(['Answer to First question.', 'Answer to Second question.', 'Answer to Second question.']);
    expect(out.at(-1)).toMatchObject({ type: 'result', result: 'Answer to Second question.' });

    const plain = await runCli(['-p', '--input-format', 'stream-json'], { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env(), stdinFile: input });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('--input-format stream-json needs --output-format stream-json.');
  });

  it('--input-format stream-json, as a conversation: the client writes each turn after the result of the one before', async () => {
    brain = (body) => ({ text: `Answer to ${userTexts(body).at(-1)}` });
    const fifo = join(tempDir(), 'turns');
    execFileSync('mkfifo', [fifo]);
    // Opened for reading and writing: neither this side nor the CLI's blocks in open().
    const writer = openSync(fifo, 'r+');
    const turn = (text: string) => writeSync(writer, `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`);
    let results = 0;
    let resultSeen: (() => void) | undefined;
    const nextResult = () => new Promise<void>((resolve) => (resultSeen = resolve));
    const run = startCli(['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose'], {
      cwd: gitRepo({ 'a.txt': 'a\n' }),
      env: env(),
      stdinFile: fifo,
      onStdout: (all) => {
        const n = events(all.slice(0, all.lastIndexOf('\n') + 1)).filter((l) => l.type === 'result').length;
        if (n > results) {
          results = n;
          resultSeen?.();
        }
      },
    });
    try {
      let seen = nextResult();
      turn('First question.');
      await seen;
      seen = nextResult();
      turn('Second question.');
      await seen;
    } finally {
      closeSync(writer);
    }
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
    expect(events(r.stdout).filter((l) => l.type === 'result').map((l) => l.result)).toEqual([
      'Answer to First question.',
      'Answer to Second question.',
      'Answer to Second question.',
    ]);
  });

  it('--include-partial-messages: stream_event lines with the text as it streams, before its assistant line', async () => {
    brain = () => ({ text: 'A partial answer, streamed.', chunks: 4 });
    const args = ['-p', 'Go.', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'];
    const r = await runCli(args, { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env() });
    expect(r.code, r.stderr).toBe(0);
    const out = events(r.stdout);
    const partial = out.filter((l) => l.type === 'stream_event');
    expect(partial[0]).toMatchObject({ event: { type: 'message_start' }, parent_tool_use_id: null, session_id: out[0].session_id });
    const deltas = partial.flatMap((l) => {
      const e = l.event as { type: string; delta?: { type: string; text?: string } };
      return e.type === 'content_block_delta' && e.delta?.type === 'text_delta' ? [e.delta.text] : [];
    });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('A partial answer, streamed.');
    expect(partial.at(-1)).toMatchObject({ event: { type: 'message_stop' } });
    expect(out.findIndex((l) => l.type === 'assistant')).toBeGreaterThan(out.indexOf(partial.at(-1)!));
    // Without the flag, none.
    const none = await runCli(args.slice(0, -1), { cwd: gitRepo({ 'a.txt': 'a\n' }), env: env() });
    expect(events(none.stdout).filter((l) => l.type === 'stream_event')).toEqual([]);
  });
});

describe('--mcp-config and --strict-mcp-config', () => {
  const server = { command: process.execPath, args: [STDIO_FIXTURE] };
  /** The MCP tools the first request of a run offered (the task waits for the servers). */
  async function offered(repo: string, args: string[], home = tempDir()): Promise<string[]> {
    brain = () => ({ text: 'Nothing to call.' });
    const from = api.requests.length;
    const r = await runCli(['-p', 'Hi.', ...args], { cwd: repo, env: env(), home });
    expect(r.code, r.stderr).toBe(0);
    return toolNames(since(from)[0].body).filter((n) => n.startsWith('mcp__')).map((n) => n.split('__').slice(0, 2).join('__'));
  }

  it('takes a JSON string, and several files at once', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const inline = await offered(repo, ['--mcp-config', JSON.stringify({ mcpServers: { inline: server } })]);
    expect(new Set(inline)).toEqual(new Set(['mcp__inline']));
    const dir = tempDir();
    writeFileSync(join(dir, 'one.json'), JSON.stringify({ mcpServers: { one: server } }));
    writeFileSync(join(dir, 'two.json'), JSON.stringify({ mcpServers: { two: server } }));
    const two = await offered(repo, ['--mcp-config', join(dir, 'one.json'), join(dir, 'two.json')]);
    expect(new Set(two)).toEqual(new Set(['mcp__one', 'mcp__two']));
  });

  it("--strict-mcp-config leaves out the repository's .mcp.json and the user config's servers", async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', '.mcp.json': JSON.stringify({ mcpServers: { repo: server } }) });
    const home = tempDir();
    const configDir = join(home, '.config', 'infinity-code');
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ mcpServers: { mine: server }, mcpProjectServers: { [repo]: { repo: { allow: true } } } }));
    const flag = ['--mcp-config', JSON.stringify({ mcpServers: { named: server } })];
    expect(new Set(await offered(repo, flag, home))).toEqual(new Set(['mcp__mine', 'mcp__repo', 'mcp__named']));
    expect(new Set(await offered(repo, [...flag, '--strict-mcp-config'], home))).toEqual(new Set(['mcp__named']));
  });
});
