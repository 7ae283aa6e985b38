// Commands in the background in a real terminal (tmux): /bg lists what runs, /stop kills it
// without waking the agent, and the agent hears that the user stopped it with the next message.
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { allText, blocks, type Msg } from './support/model.js';
import { killAll, processesMatching, untilGone } from './support/procs.js';
import { TmuxScreen } from './support/tmux.js';

// A duration no other process on the machine sleeps for: the command's own process is found by it.
const COMMAND = 'echo server-up; sleep 4242';

function brain(body: FakeRequestBody) {
  const messages = (body.messages ?? []) as Msg[];
  const last = blocks(messages.slice(-1)).find((b) => b.type === 'text');
  if (last?.type === 'text' && last.text.trim() === 'start the server') {
    return { toolUse: { name: 'execute_command', input: { command: COMMAND, run_in_background: true } } };
  }
  const seen = allText(messages);
  if (last?.type === 'text' && last.text.trim() === 'what happened?') {
    return { text: seen.includes('[stopped by the user]') ? 'You stopped the server.' : 'No idea.' };
  }
  return { text: 'The server runs.' };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

// Ink draws only the last frame when CI is set: the terminal must look like a user's.
const command = (...args: string[]) => ['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN, ...args];

describe('commands in the background, in the TUI', () => {
  it('/bg lists the command; /stop kills it and the agent is not woken; the next message tells it', async () => {
    const repo = gitRepo({ 'README.md': 'server\n' });
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
    const screen = TmuxScreen.start(command(), { cwd: repo, env, height: 45 });
    try {
      await screen.waitFor(/Ask for a change/);
      screen.type('start the server');
      screen.press('Enter');
      // Where the sandbox can't confine commands, the user says yes first.
      const asked = await screen.waitFor(/Run this command\?|The server runs\./);
      if (asked.includes('Run this command?')) screen.press('y');
      await screen.waitFor(/The server runs\.[\s\S]*Running in the background \(1\)[\s\S]*\$ echo server-up; sleep 4242[\s\S]*server-up/);
      expect(processesMatching('sleep 4242').length).toBeGreaterThan(0);

      screen.type('/bg');
      screen.press('Enter');
      await screen.waitFor(/One command runs in the background:\n\s+\$ echo server-up; sleep 4242 · main · \d+s · server-up/);

      const requests = api.requests.length;
      screen.type('/stop');
      screen.press('Enter');
      const stopped = await screen.waitFor(/Stopped the command running in the background: \$ echo server-up; sleep 4242\./);
      expect(await untilGone(() => processesMatching('sleep 4242'))).toEqual([]);
      // The indicator goes once the command's end is seen, which may come a frame after the prompt.
      expect(await screen.waitFor(/^(?![\s\S]*Running in the background)[\s\S]*Ask for a change/)).not.toContain('Running in the background');
      expect(stopped).not.toContain('Nothing is running');
      // Stopping woke nobody: the model was not asked anything.
      expect(api.requests.length).toBe(requests);

      screen.type('what happened?');
      screen.press('Enter');
      await screen.waitFor(/You stopped the server\./);
    } finally {
      killAll(processesMatching('sleep 4242'));
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
