// Leaving the TUI never loses accepted work quietly (a real terminal, tmux, the built CLI against
// the fake Messages API): quitting with changes the working tree lacks asks what becomes of them;
// kept, a later `-c` says they wait and `/diff` applies them; `/diff` never offers what was
// applied already; Esc closes a review without applying; discarded, they are gone for good while
// the conversation stays.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, git, gitRepo, tempDir } from './support/cli.js';
import { blocks, lastResult, threadOf, type Msg } from './support/model.js';
import { TmuxScreen } from './support/tmux.js';

/**
 * Root: "write X" creates X.txt itself; "delegate X" has a child write it (its report is
 * reviewed in the TUI). Child: writes the file, then closes with a report.
 */
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
  const asked = last?.type === 'text' ? /^(write|delegate) (\w+)$/.exec(last.text.trim()) : null;
  if (asked?.[1] === 'write') return { toolUse: { name: 'create_file', input: { path: `${asked[2]}.txt`, content: `${asked[2]}-line\n` } } };
  if (asked?.[1] === 'delegate') return { toolUse: { name: 'spawn_thread', input: { instructions: `write ${asked[2]}`, child_of: me.stack } } };
  if (done?.name === 'spawn_thread') return { toolUse: { name: 'sleep_until_event_or_input', input: {} } };
  if (done?.name === 'receive_event__injected') return { text: 'Finished: delegated.' };
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

/**
 * The CLI in a shell that says how it exited and stays, so what it printed after the TUI is read
 * too. Ink draws only the last frame when CI is set (even empty): the terminal must look like a user's.
 */
function start(repo: string, env: Record<string, string>, ...args: string[]): TmuxScreen {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  // A script file: tmux runs a command given as several words without a shell.
  const script = join(tempDir(), 'run.sh');
  writeFileSync(script, `env -u CI -u CONTINUOUS_INTEGRATION ${quoted}\necho "[exited $?]"\nsleep 600\n`);
  return TmuxScreen.start(['sh', script], { cwd: repo, env, height: 50 });
}

function setup() {
  const repo = gitRepo({ 'README.md': 'quit\n' });
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
  return { repo, env };
}

function say(screen: TmuxScreen, line: string): void {
  screen.type(line);
  screen.press('Enter');
}

describe('leaving the TUI with changes the working tree lacks', () => {
  it('kept: the tree is untouched, -c says they wait, /diff applies them once; Esc closes a review; apply on quit applies', async () => {
    const { repo, env } = setup();
    const first = start(repo, env);
    try {
      await first.waitFor(/sandbox (on|off)/);
      // A child writes alpha.txt; its review is accepted whole.
      say(first, 'delegate alpha');
      await first.waitFor(/Review: Changes from write alpha/);
      first.press('A');
      await first.waitFor(/all decided/);
      first.press('Enter');
      // The answer says the change waits for /diff.
      await first.waitFor(/Finished: delegated\.[\s\S]*1 file changed in this session is not in your working tree: \/diff to review and apply\./);

      say(first, '/quit');
      await first.waitFor(/Before you go: 1 file changed in this session is not in your working tree\./);
      first.press('k');
      const after = await first.waitFor(/\[exited 0\]/);
      expect(after).toMatch(/1 file changed in this session is not in your working tree \(kept: alpha\.txt\)\. Run infinity-code -c, then \/diff/);
      expect(after).toContain('git apply --3way .infinity/patches/');
    } finally {
      first.kill();
    }
    expect(existsSync(join(repo, 'alpha.txt'))).toBe(false);
    expect(git(repo, 'status', '--porcelain')).toBe('');

    const second = start(repo, env, '-c');
    try {
      await second.waitFor(/1 file changed in this session is not in your working tree: \/diff to review and apply\./);
      // Esc closes the review: nothing is applied, and /diff offers it again.
      say(second, '/diff');
      await second.waitFor(/Review: Session changes → working tree[\s\S]*Esc close/);
      second.press('Escape');
      await second.waitFor(/Review closed: nothing was applied\. The changes wait for \/diff\./);
      expect(existsSync(join(repo, 'alpha.txt'))).toBe(false);

      say(second, '/diff');
      await second.waitFor(/Review: Session changes → working tree[\s\S]*A alpha\.txt/);
      second.press('A');
      await second.waitFor(/all decided/);
      second.press('Enter');
      await second.waitFor(/Applied 1 file to the working tree: alpha\.txt\./);
      expect(readFileSync(join(repo, 'alpha.txt'), 'utf8')).toBe('alpha-line\n');

      // Applied once, never offered again.
      say(second, '/diff');
      await second.waitFor(/Nothing to apply: your working tree has every change of this session\./);

      // New work is all the quit asks about; applied on the way out.
      say(second, 'write beta');
      await second.waitFor(/Finished: .*beta\.txt/);
      say(second, '/quit');
      const asked = await second.waitFor(/Before you go: 1 file changed[\s\S]*d discard it/);
      expect(asked.slice(asked.indexOf('Before you go'))).not.toContain('alpha.txt');
      second.press('a');
      await second.waitFor(/Applied 1 file to the working tree: beta\.txt\.\s*\n[\s\S]*\[exited 0\]/);
    } finally {
      second.kill();
    }
    expect(readFileSync(join(repo, 'beta.txt'), 'utf8')).toBe('beta-line\n');
    expect(readFileSync(join(repo, 'alpha.txt'), 'utf8')).toBe('alpha-line\n');
  });

  it('discarded: the tree is untouched and -c offers nothing, but the conversation goes on', async () => {
    const { repo, env } = setup();
    const first = start(repo, env);
    try {
      await first.waitFor(/sandbox (on|off)/);
      say(first, 'write gamma');
      await first.waitFor(/Finished: .*gamma\.txt/);
      say(first, '/quit');
      await first.waitFor(/Before you go: 1 file changed/);
      first.press('d');
      await first.waitFor(/Discard the changes to 1 file for good\?/);
      first.press('d');
      await first.waitFor(/Discarded the session's changes to 1 file\. The conversation stays: infinity-code -c continues it\.[\s\S]*\[exited 0\]/);
    } finally {
      first.kill();
    }
    expect(existsSync(join(repo, 'gamma.txt'))).toBe(false);
    expect(git(repo, 'status', '--porcelain')).toBe('');

    const second = start(repo, env, '-c');
    try {
      const opened = await second.waitFor(/› write gamma[\s\S]*sandbox (on|off)/);
      expect(opened).not.toContain('not in your working tree');
      say(second, '/diff');
      await second.waitFor(/Nothing to apply/);
      // Nothing pending: /quit leaves without asking.
      say(second, '/quit');
      const end = await second.waitFor(/\[exited 0\]/);
      expect(end).not.toContain('Before you go');
    } finally {
      second.kill();
    }
    expect(existsSync(join(repo, 'gamma.txt'))).toBe(false);
  });
});
