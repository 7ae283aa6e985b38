// Issue 17: in the TUI (a real terminal, tmux), a model API that rejects the key or can't be
// reached is told once: one error line in the transcript, no retry notices. The built CLI runs
// the real SDK against the fake Messages API (401) or a closed loopback port.
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, closedLoopbackUrl, gitRepo, tempDir } from './support/cli.js';
import { TmuxScreen } from './support/tmux.js';

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: () => ({ status: 401 }) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});


/**
 * Sends one message in the TUI against `baseURL`, waits for `error`, then asks for /help: once
 * its text is drawn, everything the failed turn printed is on screen (or scrolled above it).
 */
async function transcriptAfterError(baseURL: string, error: RegExp): Promise<string> {
  const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], {
    cwd: gitRepo({ 'a.txt': 'a\n' }),
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: baseURL, HOME: tempDir(), TERM: 'xterm-256color' },
  });
  try {
    await screen.waitFor(/sandbox (on|off)/);
    screen.type('hello');
    screen.press('Enter');
    await screen.waitFor(error);
    screen.type('/help');
    screen.press('Enter');
    await screen.waitFor(/Ctrl\+C twice or Ctrl\+D quit/);
    return screen.scrollback();
  } finally {
    screen.press('C-c');
    screen.press('C-c');
    screen.kill();
  }
}

const count = (text: string, pattern: RegExp) => text.match(new RegExp(pattern.source, 'g'))?.length ?? 0;

describe('model API errors in the TUI are told once', () => {
  it('a 401: one line pointing at ANTHROPIC_API_KEY', async () => {
    const text = await transcriptAfterError(api.url, /rejected the credentials/);
    expect(count(text, /The model API rejected the credentials \(401: fake authentication_error\); check ANTHROPIC_API_KEY\./)).toBe(1);
    expect(text).not.toMatch(/Retrying/);
  });

  it('an address where nothing listens: one line naming ANTHROPIC_BASE_URL, no retry notices', async () => {
    const url = await closedLoopbackUrl();
    const text = await transcriptAfterError(url, /Could not connect/);
    // The line wraps at the terminal's width: count its start, and find the setting's value in it.
    expect(count(text, /Could not connect to the model API at /)).toBe(1);
    expect(text.replace(/\s*\n\s*/g, ' ')).toContain(`ANTHROPIC_BASE_URL is set to ${url}`);
    expect(text).not.toMatch(/Retrying/);
  });
});
