import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CompletionRequest, ScriptedReply } from '@infinity-code/runtime';
import type { Sandbox, SandboxSession } from '@infinity-code/sandbox';
import { DEFAULT_OUTPUT_LIMITS } from './index.js';
import { lastResultText, ToolAgent } from './test-support/agent.js';
import { backendsUnderTest, Fixtures } from './test-support/fixtures.js';

const backends = await backendsUnderTest();

describe.each(backends)('execute_command, fast commands (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let repo: string;
  let session: SandboxSession;
  let sb: Sandbox;
  let agent: ToolAgent;
  const run = (command: string) => agent.call('execute_command', { command });

  beforeAll(async () => {
    repo = await fx.repo({ 'hello.txt': 'hello from the repo\n' });
    session = await fx.session(repo, backend);
    sb = await session.create('runner');
    agent = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo, secretEnvNames: ['MY_SERVICE_TOKEN'] });
  });
  afterEach(async () => {
    // No per-call state outlives its command.
    await agent.exec.whenIdle();
    expect(agent.exec.running()).toEqual([]);
  });
  afterAll(async () => {
    await agent.close();
    await fx.cleanup();
  });

  it('answers with the output and exit code of a command that finishes at once', async () => {
    const r = await run('cat hello.txt && echo to stderr >&2');
    expect(r.isError).toBe(false);
    expect(r.text).toBe('hello from the repo\nto stderr\n[exit code: 0]');
    const failed = await run('echo failing; exit 3');
    expect(failed.text).toBe('failing\n[exit code: 3]');
    const quiet = await run('true');
    expect(quiet.text).toBe('(no output)\n[exit code: 0]');
    // UIs get the status and the end of the output as data.
    expect([r.display, failed.display, quiet.display]).toEqual([
      { summary: 'exit code 0', output: ['hello from the repo', 'to stderr'] },
      { summary: 'exit code 3', output: ['failing'] },
      { summary: 'exit code 0' },
    ]);
    const killed = await run("sh -c 'kill -9 $$'");
    expect(killed.text).toMatch(/\n\[exit code: 137\]$/);
  });

  it('runs commands in bash, as models write them', async () => {
    const r = await run('echo {1..3}; [[ abc == a* ]] && echo matched; set -o pipefail; false | true; echo "pipefail $?"; cat <<< here');
    expect(r.text).toBe('1 2 3\nmatched\npipefail 1\nhere\n[exit code: 0]');
  });

  it('refuses a notify_on that is no regular expression, saying so, and runs nothing', async () => {
    const r = await agent.call('execute_command', { command: 'echo ran > ran.txt', notify_on: '(unclosed' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^Error: notify_on is not a valid regular expression/);
    expect(await sb.exists('ran.txt')).toBe(false);
  });

  it('runs in the sandbox: it sees edits, and its writes stay there', async () => {
    await sb.writeFile('edited.txt', 'made by a tool\n');
    const r = await run('cat edited.txt && echo new > created-by-command.txt && pwd');
    expect(r.text).toContain('made by a tool');
    expect(await sb.readText('created-by-command.txt')).toBe('new\n');
    expect(await session.create('other').then((o) => o.exists('created-by-command.txt'))).toBe(false);
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${repo}/created-by-command.txt`)).toBe(false);
  });

  it('removes the API key and configured secrets from the environment', async () => {
    const saved = { key: process.env.ANTHROPIC_API_KEY, token: process.env.MY_SERVICE_TOKEN };
    process.env.ANTHROPIC_API_KEY = 'sk-ant-test-secret';
    process.env.MY_SERVICE_TOKEN = 'token-secret';
    // An allowlisted name (a locale variable): commands get it.
    process.env.LC_IC_HARMLESS = 'visible';
    try {
      const r = await run('echo "key=${ANTHROPIC_API_KEY-unset} token=${MY_SERVICE_TOKEN-unset} other=$LC_IC_HARMLESS"; env | grep -c secret || true');
      expect(r.text).toBe('key=unset token=unset other=visible\n0\n[exit code: 0]');
    } finally {
      for (const [name, value] of [['ANTHROPIC_API_KEY', saved.key], ['MY_SERVICE_TOKEN', saved.token]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      delete process.env.LC_IC_HARMLESS;
    }
  });

  it('keeps credentials out by their look, and lets through the ones the user allowed by name', async () => {
    const names = ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'MY_DB_PASSWORD', 'IC_ALLOWED_TOKEN'] as const;
    const saved = [...names, 'ANTHROPIC_API_KEY'].map((n) => [n, process.env[n]] as const);
    for (const n of names) process.env[n] = `value-of-${n}`;
    const allowing = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo, envAllow: ['IC_ALLOWED_TOKEN', 'ANTHROPIC_API_KEY'] });
    process.env.ANTHROPIC_API_KEY = 'sk-ant-never';
    try {
      const print = `env | grep -E '^(${names.join('|')}|ANTHROPIC_API_KEY)=' | sort; echo "home=\${HOME:+set} path=\${PATH:+set}"`;
      const plain = await run(print);
      expect(plain.text).toBe('home=set path=set\n[exit code: 0]');
      const allowed = await allowing.call('execute_command', { command: print });
      expect(allowed.text).toBe('IC_ALLOWED_TOKEN=value-of-IC_ALLOWED_TOKEN\nhome=set path=set\n[exit code: 0]');
    } finally {
      await allowing.close();
      for (const [n, v] of saved) {
        if (v === undefined) delete process.env[n];
        else process.env[n] = v;
      }
    }
  });

  it('strips ANSI escapes and keeps only the last state of carriage-return progress lines', async () => {
    const r = await run(`printf '\\033[31mred\\033[0m plain\\n10%%\\r50%%\\r100%%\\n\\033]0;title\\007done\\n'`);
    expect(r.text).toBe('red plain\n100%\ndone\n[exit code: 0]');
  });

  it('caps the output kept for the model: head and tail, with the number of lines dropped', async () => {
    const { headLines, tailLines } = DEFAULT_OUTPUT_LIMITS;
    const r = await run('seq 1 5000');
    const lines = r.text.split('\n');
    expect(lines.slice(0, headLines)).toEqual(Array.from({ length: headLines }, (_, i) => String(i + 1)));
    expect(lines[headLines]).toBe(`[... ${5000 - headLines - tailLines} lines of output omitted ...]`);
    expect(lines.slice(headLines + 1, -1)).toEqual(Array.from({ length: tailLines }, (_, i) => String(5000 - tailLines + i + 1)));
    expect(lines.at(-1)).toBe('[exit code: 0]');
    const wide = await run(`head -c 5000 /dev/zero | tr '\\0' 'x'; echo`);
    expect(wide.text).toBe(`${'x'.repeat(DEFAULT_OUTPUT_LIMITS.maxLineChars)}… [4000 more characters]\n[exit code: 0]`);
  });

  it('refuses an empty command', async () => {
    const r = await run('   ');
    expect(r.isError).toBe(true);
    expect(r.text).toBe('Error: command is empty. Give a shell command to run.');
  });

  if (backend === 'copy') {
    it('refuses commands naming the user\'s repository when the sandbox is a copy elsewhere', async () => {
      const r = await run(`echo hacked > ${repo}/hello.txt`);
      expect(r.isError).toBe(true);
      expect(r.text).toContain(`the command names ${repo}, the user's own repository`);
      const { readFile } = await import('node:fs/promises');
      expect(await readFile(`${repo}/hello.txt`, 'utf8')).toBe('hello from the repo\n');
    });
  } else {
    it('sees the merged view at the repository\'s own path, so absolute paths stay in the sandbox', async () => {
      const r = await run(`echo sandboxed > ${repo}/hello.txt && cat ${repo}/hello.txt`);
      expect(r.text).toBe('sandboxed\n[exit code: 0]');
      const { readFile } = await import('node:fs/promises');
      expect(await readFile(`${repo}/hello.txt`, 'utf8')).toBe('hello from the repo\n');
    });
  }
});

describe.each(backends)('a scripted agent reads, edits and tests (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  afterAll(() => fx.cleanup());

  it('reads a file, edits it, runs `node test.js`, and gets the test output as the tool result', async () => {
    const LIB = 'exports.double = (n) => n + n + 1; // bug\n';
    const repo = await fx.repo({
      // Its own package.json: a stray one in a parent directory must not make test.js an ES module.
      'package.json': '{ "private": true, "type": "commonjs" }\n',
      'lib.js': LIB,
      'test.js':
        "const assert = require('assert');\nconst { double } = require('./lib');\n" +
        "assert.strictEqual(double(21), 42);\nconsole.log('all 1 tests passed');\n",
    });
    const session = await fx.session(repo, backend);
    const sandboxes = new Map<string, Sandbox>();
    const steps: Array<(r: CompletionRequest) => ScriptedReply> = [
      () => ({ text: 'Let me look at the code.', toolCall: { name: 'read_file', input: { path: 'lib.js' }, id: 'c1' } }),
      (r) => {
        expect(lastResultText(r)).toContain('     1\texports.double = (n) => n + n + 1; // bug');
        return { toolCall: { name: 'edit_file', input: { path: 'lib.js', old_str: 'n + n + 1; // bug', new_str: 'n * 2;' }, id: 'c2' } };
      },
      (r) => {
        expect(lastResultText(r)).toContain('Edited lib.js at line 1 (+1 -1):\n     1\texports.double = (n) => n * 2;');
        return { toolCall: { name: 'execute_command', input: { command: 'node test.js' }, id: 'c3' } };
      },
      () => ({ text: 'Fixed: the tests pass.' }),
    ];
    let step = 0;
    const stateDir = await fx.tempDir('ic-tools-db-');
    const agent = new ToolAgent({
      sqlitePath: `${stateDir}/state.db`,
      repoRoot: repo,
      brain: (r) => steps[step++](r),
      sandboxFor: async (threadId) => {
        let sb = sandboxes.get(threadId);
        if (!sb) sandboxes.set(threadId, (sb = await session.create(threadId)));
        return sb;
      },
    });
    try {
      await agent.system.sendUserText('main', 'Fix double() and run the tests.');
      await agent.system.whenIdle();
      expect(step).toBe(4);
      const test = agent.answer('c3');
      expect(test.isError).toBe(false);
      expect(test.text).toBe('all 1 tests passed\n[exit code: 0]');
      const thread = await agent.store.loadThread('main');
      const lastTurn = thread!.history.at(-1)!;
      expect(lastTurn).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Fixed: the tests pass.' }] });
      // The edit lives in the thread's sandbox; the user's file is untouched until accepted.
      expect(await sandboxes.get('main')!.readText('lib.js')).toBe('exports.double = (n) => n * 2;\n');
      const { readFile } = await import('node:fs/promises');
      expect(await readFile(`${repo}/lib.js`, 'utf8')).toBe(LIB);
      const displays = agent.events.flatMap((e) => (e.type === 'tool-call' ? [e.display] : []));
      expect(displays).toEqual(['Read lib.js', 'Edit lib.js (+1 -1)', '$ node test.js']);
    } finally {
      await agent.close();
    }
  });
});
