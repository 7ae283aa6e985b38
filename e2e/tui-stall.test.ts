// Issue 35 (7): a hung model API in the TUI (a real terminal, tmux). The spinner counts the time
// and says how long nothing came; a stream silent past stallTimeoutMs is given up at once with a
// clear message (the user is there to send again), not retried behind a spinner for minutes.
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { TmuxScreen } from './support/tmux.js';

let api: FakeMessagesApi;
beforeAll(async () => {
  // Headers and message_start, then nothing for a minute.
  api = await startFakeMessagesApi({ brain: () => ({ text: 'never finished', stallMs: 60_000, stallAfterChunks: 1 }) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('a hung model API in the TUI', () => {
  it('shows the wait and the silence on the spinner, then gives the stream up once with a clear message', async () => {
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], {
      cwd: gitRepo({ 'a.txt': 'a\n' }),
      env: {
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: api.url,
        HOME: tempDir(),
        TERM: 'xterm-256color',
        // 30 s by default: shortened so the test doesn't wait that long.
        INFINITY_CODE_RETRY: JSON.stringify({ stallTimeoutMs: 8_000 }),
      },
    });
    try {
      await screen.waitFor(/sandbox (on|off)/);
      const before = api.requests.length;
      screen.type('hello');
      screen.press('Enter');
      await screen.waitFor(/Thinking… \d+s · no data for \d+s/);
      await screen.waitFor(/stream stalled: nothing arrived for 8 s/);
      // Given up at once: one request, no retry.
      expect(api.requests.length - before).toBe(1);
      expect(screen.scrollback()).not.toMatch(/Retrying in/);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
