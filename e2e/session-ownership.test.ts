// A session belongs to the process that runs it: a new run never runs another session's left
// work (an interrupted call, a command still running elsewhere), nor bills its model calls; -c and
// -r are the only ways back, and a session a live process runs can't be taken over. The built
// CLI, headless, against the fake Messages API.
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, runCli, startCli, tempDir } from './support/cli.js';
import { TmuxScreen } from './support/tmux.js';

type Block = { type: string; text?: string; content?: unknown };
const blocksOf = (body: FakeRequestBody): Block[] => (body.messages ?? []).flatMap((m) => (m as { content: Block[] }).content);
/** The task of the session a request is for: its first user text. */
const taskOf = (body: FakeRequestBody): string => blocksOf(body).find((b) => b.type === 'text')?.text ?? '';

/** "run long" starts a command that runs until it is stopped; anything else is answered at once. */
const brain: FakeBrain = (body) => {
  const task = taskOf(body);
  const results = blocksOf(body).filter((b) => b.type === 'tool_result');
  if (task.includes('run long') && results.length === 0) {
    return { content: [{ type: 'tool_use', name: 'execute_command', input: { command: 'sleep 120', timeout: 600_000 } }] };
  }
  return { text: `Answered: ${task.slice(0, 40)} (${JSON.stringify(results).includes('interrupted') ? 'told of the interruption' : 'fresh'})` };
};

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

const requests = () => api.requests.filter((q) => q.path === '/v1/messages');

/**
 * Starts "run long" headless; resolves once its command call is committed (its assistant line is
 * out), with the run, its session and its stdout so far.
 */
async function startLongRun(repo: string, env: Record<string, string>, home?: string) {
  let stdout = '';
  let commandOut!: () => void;
  const running = new Promise<void>((r) => (commandOut = r));
  const run = startCli(['-p', 'run long', '--output-format', 'stream-json', '--verbose'], {
    cwd: repo,
    env,
    ...(home !== undefined ? { home } : {}),
    onStdout: (all) => {
      stdout = all;
      if (all.includes('"execute_command"')) commandOut();
    },
  });
  await Promise.race([running, run.done.then((r) => Promise.reject(new Error(`ended early (${r.code}): ${r.stderr}`)))]);
  const sessionId = (JSON.parse(stdout.split('\n')[0]) as { session_id: string }).session_id;
  return { run, sessionId, stdout: () => stdout };
}

describe('a session belongs to the process that runs it', () => {
  it('an interrupted session stays out of the next run; -r takes it up with its left work', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
    const { run: long, sessionId: longSession } = await startLongRun(repo, env);
    long.kill('SIGINT');
    expect((await long.done).code).toBe(130);

    const before = requests().length;
    const quick = await runCli(['-p', 'quick question', '--yes', '--output-format', 'json'], { cwd: repo, env });
    expect(quick.code, quick.stderr).toBe(0);
    const result = JSON.parse(quick.stdout) as { session_id: string; num_turns: number; result: string };
    expect(result.session_id).not.toBe(longSession);
    // One model call, for its own task: the old thread was neither run nor billed here.
    expect(result.num_turns).toBe(1);
    expect(requests().slice(before).map((q) => taskOf(q.body))).toEqual(['quick question']);
    expect(result.result).toContain('fresh');

    // -r is the way back: the left call is reported as interrupted to that session's model.
    const back = await runCli(['-r', longSession, '-p', 'go on', '--output-format', 'json'], { cwd: repo, env });
    expect(back.code, back.stderr).toBe(0);
    expect((JSON.parse(back.stdout) as { session_id: string; result: string }).result).toContain('told of the interruption');
  });

  it('two processes in one repository keep apart; a running session cannot be resumed elsewhere', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
    const { run: long, sessionId: longSession, stdout } = await startLongRun(repo, env);
    try {

      const before = requests().length;
      const quick = await runCli(['-p', 'quick question', '--output-format', 'json'], { cwd: repo, env });
      expect(quick.code, quick.stderr).toBe(0);
      expect(requests().slice(before).map((q) => taskOf(q.body))).toEqual(['quick question']);
      // The first process's command was not called interrupted by the second.
      expect(stdout()).not.toContain('interrupted');

      const taken = await runCli(['-r', longSession, '-p', 'take over', '--output-format', 'json'], { cwd: repo, env });
      expect(taken.code).toBe(2);
      expect(taken.stderr).toContain(`pid ${long.pid}`);
      expect(taken.stderr).not.toMatch(/\n\s+at /);
    } finally {
      long.kill('SIGINT');
    }
    const ended = await long.done;
    expect(ended.code).toBe(130);
  });

  it('a fresh TUI session shows nothing of an interrupted one, and runs and bills only its own thread', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const home = tempDir();
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
    const { run: long } = await startLongRun(repo, env, home);
    long.kill('SIGINT');
    expect((await long.done).code).toBe(130);

    const before = requests().length;
    // Ink draws only the last frame when CI is set: the terminal must look like a user's.
    const command = ['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN];
    const screen = TmuxScreen.start(command, { cwd: repo, env: { ...env, HOME: home, TERM: 'xterm-256color' }, height: 40 });
    try {
      await screen.waitFor(/session th_/);
      screen.type('quick question');
      screen.press('Enter');
      const shown = await screen.waitFor(/Answered: quick question \(fresh\)/);
      expect(shown).not.toContain('sleep 120');
      expect(shown).not.toMatch(/interrupted/i);
      expect(requests().slice(before).map((q) => taskOf(q.body))).toEqual(['quick question']);
      screen.type('/quit');
      screen.press('Enter');
      await screen.waitForExit();
    } finally {
      screen.kill();
    }
  });
});
