import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { demoBrain, DEMO_FILES, DEMO_TASK } from 'infinity-code/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, fakeBrain, git, gitRepo, runCli, startCli, tempDir } from './support/cli.js';

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: fakeBrain(demoBrain) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

const env = (extra: Record<string, string> = {}) => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, DEMO_TEST_STEPS: '3', ...extra });
// The test command goes to the background after 1 s, so its output streams as events.
const config = { commandTimeoutMs: 1000 };

describe('headless runs of the built CLI', () => {
  it('--yes: two children edit in parallel, both changes land in the working tree, stream-json ends with a result', async () => {
    const repo = gitRepo(DEMO_FILES, config);
    const r = await runCli(['-p', DEMO_TASK, '--yes', '--output-format', 'stream-json'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(repo, 'greet.js'), 'utf8')).toContain('return `Hello, ${name}!`;');
    expect(readFileSync(join(repo, 'farewell.js'), 'utf8')).toContain('Goodbye');
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    expect(lines[0]).toMatchObject({ type: 'system', subtype: 'init' });
    const result = lines.at(-1)!;
    expect(result).toMatchObject({ type: 'result', status: 'success', exit_code: 0, diff_applied: true });
    expect([...(result.files_changed as string[])].sort()).toEqual(['farewell.js', 'greet.js']);
    // The children really overlapped: the second was spawned before the first closed.
    const kinds = lines.map((l) => `${l.type}-${String(l.subtype)}`);
    expect(kinds.indexOf('thread-closed')).toBeGreaterThan(kinds.lastIndexOf('thread-spawned'));
    expect(kinds.lastIndexOf('thread-spawned')).toBeGreaterThan(0);
    expect(lines.filter((l) => l.type === 'event' && l.subtype === 'report')).toHaveLength(2);
    // Claude Code's shapes: the tools in init, replies as Messages API content, results as user
    // messages, and a child's messages tied to the spawn_thread call that started it.
    expect(lines[0].tools).toEqual(expect.arrayContaining(['spawn_thread', 'read_file', 'edit_file', 'execute_command']));
    type Msg = { message: { content: Array<{ type: string; id?: string; name?: string; tool_use_id?: string }> }; thread_id: string; parent_tool_use_id: string | null };
    const assistant = lines.filter((l) => l.type === 'assistant') as unknown as Msg[];
    const spawns = assistant.flatMap((l) => l.message.content.filter((b) => b.type === 'tool_use' && b.name === 'spawn_thread').map((b) => b.id));
    expect(spawns).toHaveLength(2);
    const childReplies = assistant.filter((l) => l.parent_tool_use_id !== null);
    expect(new Set(childReplies.map((l) => l.parent_tool_use_id))).toEqual(new Set(spawns));
    const results = (lines.filter((l) => l.type === 'user') as unknown as Msg[]).flatMap((l) => l.message.content.map((b) => b.tool_use_id));
    const unanswered = assistant.flatMap((l) => l.message.content.filter((b) => b.type === 'tool_use' && !results.includes(b.id)).map((b) => `${b.name} in ${l.thread_id}`));
    expect(unanswered).toEqual([]);
  });

  it('without --yes: exit 4, the working tree untouched, the patch saved and named', async () => {
    const repo = gitRepo(DEMO_FILES, config);
    const before = readFileSync(join(repo, 'greet.js'), 'utf8');
    const r = await runCli(['-p', DEMO_TASK], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(4);
    expect(readFileSync(join(repo, 'greet.js'), 'utf8')).toBe(before);
    expect(existsSync(join(repo, 'farewell.js'))).toBe(false);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    const patch = /The patch is at (\S+?);/.exec(r.stderr)?.[1];
    expect(patch, r.stderr).toBeDefined();
    git(repo, 'apply', '--check', patch!);
    expect(r.stdout).toContain('Done.');
  });

  it('json output is one result object', async () => {
    const repo = gitRepo(DEMO_FILES, config);
    const r = await runCli(['-p', DEMO_TASK, '--output-format', 'json', '--yes'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { type: string; result: string; num_turns: number };
    expect(result.type).toBe('result');
    expect(result.result).toMatch(/^Done\./);
    expect(result.num_turns).toBeGreaterThan(5);
  });
});

describe('headless error paths', () => {
  it('no API key nor token: exit 3 with what to do', async () => {
    const r = await runCli(['-p', 'hello'], { cwd: gitRepo({ 'a.txt': 'a\n' }) });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set/);
  });

  it('an API answering 401: exit 3', async () => {
    const bad = await startFakeMessagesApi({ brain: () => ({ status: 401 }) });
    try {
      const r = await runCli(['-p', 'hello'], { cwd: gitRepo({ 'a.txt': 'a\n' }), env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: bad.url } });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/ANTHROPIC_API_KEY/);
    } finally {
      await bad.close();
    }
  });

  it('--max-turns 1 hit: exit 5', async () => {
    const repo = gitRepo(DEMO_FILES, config);
    const r = await runCli(['-p', DEMO_TASK, '--max-turns', '1'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/budget of 1 model calls/);
  });

  it("inside a repository's .git directory (no working tree): a clear message and a usage error", async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const r = await runCli(['-p', 'hello'], { cwd: join(repo, '.git'), env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is inside a repository's \.git directory or a bare repository.*working tree of a checkout/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('the home directory, in no repository: a clear message and a usage error (any other folder works, see folder.test.ts)', async () => {
    const home = tempDir();
    const r = await runCli(['-p', 'hello'], { cwd: home, home, env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is your home directory, not a project folder: cd into a project folder/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('SIGINT: exit 130, and -c resumes the same session to the end', async () => {
    let stalled!: () => void;
    const reached = new Promise<void>((r) => (stalled = r));
    const slow = await startFakeMessagesApi({
      brain: (_b, i) => {
        if (i === 0) {
          stalled();
          return { stallMs: 60_000 };
        }
        return { text: 'Resumed and finished.' };
      },
    });
    try {
      const repo = gitRepo({ 'a.txt': 'a\n' });
      const e = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: slow.url };
      const run = startCli(['-p', 'do something', '--output-format', 'json'], { cwd: repo, env: e });
      await reached;
      run.kill('SIGINT');
      const first = await run.done;
      expect(first.code, first.stderr).toBe(130);
      const firstResult = JSON.parse(first.stdout) as { session_id: string; status: string };
      expect(firstResult.status).toBe('interrupted');
      const second = await runCli(['-c', '-p', 'please continue', '--output-format', 'json'], { cwd: repo, env: e });
      expect(second.code, second.stderr).toBe(0);
      const secondResult = JSON.parse(second.stdout) as { session_id: string; result: string };
      expect(secondResult.session_id).toBe(firstResult.session_id);
      expect(secondResult.result).toBe('Resumed and finished.');
    } finally {
      await slow.close();
    }
  });
});

describe('SIGTERM and SIGHUP end a headless run as SIGINT does', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('%s: exit %i, a result line, the work saved as a patch and not applied', async (sig, code) => {
    let stalled!: () => void;
    const reached = new Promise<void>((r) => (stalled = r));
    const slow = await startFakeMessagesApi({
      brain: (_b, i) => {
        if (i === 0) return { content: [{ type: 'tool_use', name: 'create_file', input: { path: 'made.txt', content: 'made\n' } }] };
        stalled();
        return { stallMs: 60_000 };
      },
    });
    try {
      const repo = gitRepo({ 'a.txt': 'a\n' });
      const run = startCli(['-p', 'make a file', '--yes', '--output-format', 'json'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: slow.url } });
      await reached;
      run.kill(sig);
      const r = await run.done;
      expect(r.code, r.stderr).toBe(code);
      const result = JSON.parse(r.stdout) as { status: string; exit_code: number; patch_file: string | null; diff_applied: boolean };
      expect(result).toMatchObject({ status: 'interrupted', exit_code: code, diff_applied: false });
      expect(result.patch_file).not.toBeNull();
      // Named relative to the repository, as the run printed it.
      expect(readFileSync(join(repo, result.patch_file!), 'utf8')).toContain('+made');
      expect(existsSync(join(repo, 'made.txt'))).toBe(false);
    } finally {
      await slow.close();
    }
  });
});

interface Step {
  at: number;
  what: string;
  ms: number | undefined;
  detail: string;
}

function steps(text: string): Step[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('[timing] '))
    .map((l) => {
      const m = /^\[timing\] (\d+\.\d) (\S+)(?: (\d+\.\d)ms)?(?: (.*))?$/.exec(l);
      if (!m) throw new Error(`not a timing line: ${l}`);
      return { at: Number(m[1]), what: m[2], ms: m[3] === undefined ? undefined : Number(m[3]), detail: m[4] ?? '' };
    });
}

// Where a run's time goes, one `[timing]` line per step.
describe('INFINITY_CODE_TRACE', () => {
  it('=1: a headless run prints each step on stderr, in the order they happened, with how long each took', async () => {
    const repo = gitRepo(DEMO_FILES);
    const r = await runCli(['-p', DEMO_TASK, '--yes'], { cwd: repo, env: env({ INFINITY_CODE_TRACE: '1', DEMO_TEST_STEPS: '1' }) });
    expect(r.code, r.stderr).toBe(0);
    const trace = steps(r.stderr);
    const kinds = trace.map((s) => s.what);
    for (const k of ['model-request', 'model-reply', 'session-open', 'git', 'sandbox-mount', 'command', 'diff', 'quiescent', 'root-diff', 'apply', 'close']) {
      expect(kinds, k).toContain(k);
    }
    // Lines come as the steps end: their clocks only go forward, and a step ends after it began.
    for (let i = 1; i < trace.length; i++) expect(trace[i].at).toBeGreaterThanOrEqual(trace[i - 1].at);
    for (const s of trace) if (s.ms !== undefined && s.what !== 'cpu') expect(s.ms).toBeLessThanOrEqual(s.at);
    // The first request precedes the first reply; the run ends after the last reply: its diff,
    // the apply, then the teardown.
    expect(kinds.indexOf('model-request')).toBeLessThan(kinds.indexOf('model-reply'));
    expect(kinds.indexOf('quiescent')).toBeGreaterThan(kinds.lastIndexOf('model-reply'));
    expect(kinds.lastIndexOf('root-diff')).toBeGreaterThan(kinds.indexOf('quiescent'));
    expect(kinds.indexOf('apply')).toBeGreaterThan(kinds.lastIndexOf('root-diff'));
    expect(kinds.at(-2)).toBe('close');
    // Last, as the process exits: the CPU time it used, all its threads.
    expect(kinds.at(-1)).toBe('cpu');
    const cpu = trace.at(-1)!;
    const [, user, sys] = /^user (\d+) sys (\d+)$/.exec(cpu.detail)!.map(Number);
    expect(cpu.ms).toBeGreaterThan(0);
    expect(Math.abs(user + sys - cpu.ms!)).toBeLessThanOrEqual(2);
    expect(trace.find((s) => s.what === 'apply')?.detail).toBe('2 files');
    expect(trace.find((s) => s.what === 'command')?.detail).toBe('node test.js');
    expect(trace.find((s) => s.what === 'git' && s.detail.startsWith('snapshot'))).toBeDefined();
  });

  it('a file name: the lines go there, stderr has none; unset: no line anywhere', async () => {
    const file = join(tempDir(), 'timing.log');
    const traced = await runCli(['-p', DEMO_TASK, '--yes'], { cwd: gitRepo(DEMO_FILES), env: env({ INFINITY_CODE_TRACE: file, DEMO_TEST_STEPS: '1' }) });
    expect(traced.code, traced.stderr).toBe(0);
    expect(traced.stderr).not.toContain('[timing]');
    expect(steps(readFileSync(file, 'utf8')).map((s) => s.what)).toEqual(expect.arrayContaining(['model-request', 'root-diff', 'apply', 'close']));

    const plain = await runCli(['-p', DEMO_TASK, '--yes'], { cwd: gitRepo(DEMO_FILES), env: env({ DEMO_TEST_STEPS: '1' }) });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toContain('[timing]');
  });

  it('a file that cannot be written: exit 3 with what to do, before anything runs', async () => {
    const repo = gitRepo(DEMO_FILES);
    const before = api.requests.length;
    const r = await runCli(['-p', DEMO_TASK, '--yes'], { cwd: repo, env: env({ INFINITY_CODE_TRACE: join(tempDir(), 'missing', 'timing.log'), DEMO_TEST_STEPS: '1' }) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('INFINITY_CODE_TRACE names');
    expect(r.stderr).toContain('set it to 1 for stderr, or to a writable file');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(api.requests.length).toBe(before);
  });
});
