// The TUI in a real terminal (tmux) when the model runs commands: where the sandbox can't confine
// them, the user answers yes or no before each; n reaches the model as a refusal, y runs it.
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { TmuxScreen } from './support/tmux.js';

/** First `echo first-ran`, then `echo second-ran`, then says what each got back. */
function brain(body: FakeRequestBody) {
  const seen = JSON.stringify(body.messages ?? []);
  const calls = (seen.match(/"type":"tool_use"/g) ?? []).length;
  if (calls === 0) return { toolUse: { name: 'execute_command', input: { command: 'echo first-$((20+1))' } } };
  if (calls === 1) return { toolUse: { name: 'execute_command', input: { command: 'echo second-$((40+2))' } } };
  const outcome = (marker: string) => (seen.includes(marker) ? 'ran' : seen.includes('the user declined') ? 'declined' : 'missing');
  return { text: `Report: first ${outcome('first-21')}, second ${outcome('second-42')}.` };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('commands in the TUI', () => {
  it('asks before each command where the sandbox cannot confine it: n declines, y runs', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], { cwd: repo, env });
    try {
      // The session is open once the status line says whether the sandbox confines commands.
      const status = await screen.waitFor(/sandbox (on|off)/);
      screen.type('Run two commands');
      screen.press('Enter');
      if (!status.includes('sandbox off')) {
        // Commands are confined on this machine: nothing is asked, both run.
        expect(await screen.waitFor(/Report:.*\./)).toContain('Report: first ran, second ran.');
        return;
      }
      const first = await screen.waitFor(/Run this command\?|Report:/);
      expect(first).toMatch(/Run this command\? The agent asks\.[\s\S]*\$ echo first-\$\(\(20\+1\)\)/);
      screen.press('n');
      await screen.waitFor(/Run this command\?[\s\S]*\$ echo second-\$\(\(40\+2\)\)/);
      screen.press('y');
      const end = await screen.waitFor(/Report:.*\./);
      expect(end).toContain('Report: first declined, second ran.');
      expect(end).not.toContain('Run this command?');
      expect(end).toMatch(/Ask for a change/);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
