// The TUI in a plain folder (no git repository; a real terminal, tmux, the built CLI against the
// fake Messages API): the user is told once where the snapshots are kept, a child's change is
// reviewed and accepted, `/diff` applies it to the folder, and no `.git` ever appears there.
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, tempDir } from './support/cli.js';
import { blocks, lastResult, threadOf, type Msg } from './support/model.js';
import { TmuxScreen } from './support/tmux.js';

/** Root: "delegate X" has a child write X.txt (its report is reviewed in the TUI). Child: writes it, then closes. */
function brain(body: FakeRequestBody) {
  const messages = (body.messages ?? []) as Msg[];
  const me = threadOf(body);
  const done = lastResult(messages);
  if (me.stack.length > 1) {
    if (done?.name === 'create_file') return { toolUse: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'Wrote it.' } } };
    const name = /write (\w+)/.exec(done?.text ?? '')?.[1] ?? 'unknown';
    return { toolUse: { name: 'create_file', input: { path: `${name}.txt`, content: `${name}-line\n` } } };
  }
  const last = blocks(messages.slice(-1)).find((b) => b.type === 'text');
  const asked = last?.type === 'text' ? /^delegate (\w+)$/.exec(last.text.trim()) : null;
  if (asked) return { toolUse: { name: 'spawn_thread', input: { instructions: `write ${asked[1]}`, child_of: me.stack } } };
  if (done?.name === 'spawn_thread') return { toolUse: { name: 'sleep_until_event_or_input', input: {} } };
  if (done?.name === 'receive_event__injected') return { text: 'Finished: delegated.' };
  return { text: 'Nothing to do.' };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

/** The CLI in a shell that says how it exited and stays. Ink draws only the last frame when CI is set. */
function start(folder: string, env: Record<string, string>): TmuxScreen {
  const quoted = [process.execPath, BIN].map((a) => `'${a}'`).join(' ');
  const script = join(tempDir(), 'run.sh');
  writeFileSync(script, `env -u CI -u CONTINUOUS_INTEGRATION ${quoted}\necho "[exited $?]"\nsleep 600\n`);
  return TmuxScreen.start(['sh', script], { cwd: folder, env, height: 50 });
}

function say(screen: TmuxScreen, line: string): void {
  screen.type(line);
  screen.press('Enter');
}

describe('the TUI in a folder without a git repository', () => {
  it('says once where the snapshots are kept; a reviewed change reaches the folder through /diff; no .git appears', async () => {
    const folder = realpathSync(tempDir());
    writeFileSync(join(folder, 'README.md'), 'a plain folder\n');
    const home = realpathSync(tempDir());
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: home, TERM: 'xterm-256color' };
    const first = start(folder, env);
    try {
      // The notice, wrapped as the terminal's width makes it.
      await first.waitFor(/is not a git repository: Infinity Code keeps its snapshots in[\s\S]*your\s+folder\s+is\s+not\s+changed\s+until\s+you\s+accept\./);
      expect(first.screen().replace(/\s+/g, '')).toContain(`${home}/.local/state/infinity-code;`.replace(/\s+/g, ''));
      await first.waitFor(/Ask for a change/);

      say(first, 'delegate alpha');
      await first.waitFor(/Review: Changes from write alpha[\s\S]*alpha\.txt/);
      first.press('A');
      await first.waitFor(/all decided/);
      first.press('Enter');
      await first.waitFor(/Finished: delegated\.[\s\S]*1 file changed in this session is not in your working tree: \/diff to review and apply\./);
      // Accepted into the session, not yet into the folder.
      expect(existsSync(join(folder, 'alpha.txt'))).toBe(false);

      say(first, '/diff');
      await first.waitFor(/Review: Session changes → working tree[\s\S]*A alpha\.txt/);
      first.press('A');
      await first.waitFor(/all decided/);
      first.press('Enter');
      await first.waitFor(/Applied 1 file(\(s\))? to the working tree: alpha\.txt\./);
      expect(readFileSync(join(folder, 'alpha.txt'), 'utf8')).toBe('alpha-line\n');
      expect(readdirSync(folder).sort()).toEqual(['.infinity', 'README.md', 'alpha.txt']);

      say(first, '/quit');
      await first.waitFor(/\[exited 0\]/);
    } finally {
      first.kill();
    }

    // Told once per folder: the next run in it goes straight to work.
    const second = start(folder, env);
    try {
      await second.waitFor(/Ask for a change/);
      say(second, 'delegate beta');
      await second.waitFor(/Review: Changes from write beta/);
      expect(second.scrollback()).not.toMatch(/is not a git repository/);
    } finally {
      second.kill();
    }
    expect(existsSync(join(folder, '.git'))).toBe(false);
  });
});
