// Sessions in the TUI (a real terminal, tmux): `/new` starts a session of its own, so `/diff`
// then offers only the new session's changes, and `-c` after quitting continues the new session
// with them. The TUI opens its session the way headless runs do: INFINITY_CODE_RETRY counts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, git, gitRepo, runCli, tempDir } from './support/cli.js';
import { blocks, lastResult, type Msg } from './support/model.js';
import { TmuxScreen } from './support/tmux.js';

/** "write alpha" creates alpha.txt holding "alpha-line"; anything else is answered in words. */
function brain(body: FakeRequestBody) {
  const messages = (body.messages ?? []) as Msg[];
  const last = blocks(messages.slice(-1)).find((b) => b.type === 'text');
  const asked = last?.type === 'text' ? /^write (\w+)$/.exec(last.text.trim()) : null;
  if (asked) return { toolUse: { name: 'create_file', input: { path: `${asked[1]}.txt`, content: `${asked[1]}-line\n` } } };
  const done = lastResult(messages);
  return { text: done ? `Finished: ${done.text.split('\n')[0]}` : 'Nothing to do.' };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

// Ink draws only the last frame when CI is set (even empty): the terminal must look like a user's.
const command = (...args: string[]) => ['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN, ...args];

describe('sessions in the TUI', () => {
  it('/new then /diff shows only the new session\'s changes; -c afterwards continues the new session with them', async () => {
    const repo = gitRepo({ 'README.md': 'sessions\n' });
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
    const screen = TmuxScreen.start(command(), { cwd: repo, env, height: 50 });
    let second: string;
    try {
      await screen.waitFor(/sandbox (on|off)/);
      screen.type('write alpha');
      screen.press('Enter');
      await screen.waitFor(/Finished: .*alpha\.txt/);

      screen.type('/new');
      screen.press('Enter');
      second = /New session (th_[0-9a-z]{13})\./.exec(await screen.waitFor(/New session th_[0-9a-z]{13}\./))![1]!;
      // alpha.txt stays with the session left behind, and the user hears so.
      await screen.waitFor(/1 file changed in the previous session is not in your working tree: infinity-code -r th_[0-9a-z]{5} brings it back/);
      screen.type('write beta');
      screen.press('Enter');
      await screen.waitFor(/Finished: .*beta\.txt/);

      screen.type('/diff');
      screen.press('Enter');
      // The transcript above shows each edit's diff; only the review box counts here.
      const screenText = await screen.waitFor(/Review: Session changes → working tree[\s\S]*beta-line/);
      const review = screenText.slice(screenText.indexOf('Review: Session changes'));
      expect(review).toContain('A beta.txt');
      expect(review).not.toContain('alpha');
      // Nothing applied now: reject it all, with a reason.
      screen.press('R');
      await screen.waitFor(/Reason for rejecting/);
      screen.type('later');
      screen.press('Enter');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      await screen.waitFor(/accepted 0 hunks, rejected 1\./);
      screen.type('/quit');
      screen.press('Enter');
      // beta.txt is not in the working tree: kept for -c.
      await screen.waitFor(/Before you go: 1 file changed in this session is not in your working tree\.[\s\S]*beta\.txt/);
      screen.press('k');
      await screen.waitForExit();
    } finally {
      screen.kill();
    }
    expect(existsSync(join(repo, 'alpha.txt'))).toBe(false);
    expect(existsSync(join(repo, 'beta.txt'))).toBe(false);

    // -c continues the session /new started, over the sandboxes it worked in.
    const r = await runCli(['-c', '-p', 'status', '--output-format', 'json'], { cwd: repo, env });
    const result = JSON.parse(r.stdout) as { session_id: string; files_changed: string[]; status: string };
    expect(result.session_id, r.stderr).toBe(second);
    expect(result.files_changed).toEqual(['beta.txt']);
    expect(result.status).toBe('unapplied');
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('honours INFINITY_CODE_RETRY: with no retries, an overloaded API is an error at once', async () => {
    const overloaded = await startFakeMessagesApi({ brain: () => ({ status: 529 }) });
    const repo = gitRepo({ 'README.md': 'retry\n' });
    const env = {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: overloaded.url,
      HOME: tempDir(),
      TERM: 'xterm-256color',
      INFINITY_CODE_RETRY: '{"maxRetries": 0}',
    };
    const screen = TmuxScreen.start(command(), { cwd: repo, env });
    try {
      await screen.waitFor(/sandbox (on|off)/);
      screen.type('hello');
      screen.press('Enter');
      // Without the setting the runtime retries 8 times, saying so: "Retrying in 1.0s (attempt 1)".
      const shown = await screen.waitFor(/The model API is overloaded|Retrying in/);
      expect(shown).toContain('The model API is overloaded');
      expect(shown).not.toContain('Retrying in');
      expect(overloaded.requests).toHaveLength(1);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
      await overloaded.close();
    }
  });
});
