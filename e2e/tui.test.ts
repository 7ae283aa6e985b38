// The terminal UI in a real terminal (tmux) against a local fake Messages API: the user types a
// task, sees streamed text, reviews a child's diff hunk by hunk, and the rejection reason reaches
// the model.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { TmuxScreen } from './support/tmux.js';

const REASON = 'keep the old spelling';
const FILES = { 'colors.txt': 'colour one\n', 'sizes.txt': 'small\n' };

function bodyText(body: FakeRequestBody): string {
  return JSON.stringify(body.messages ?? []);
}

/** Root: delegate, then wait; child: change two files, then close with a report. */
function brain(body: FakeRequestBody) {
  const system = String(body.system ?? '');
  const id = /Your current thread ID is (\S+)\./.exec(system)![1]!;
  const stack = JSON.parse(/Thread stack: (\[.*\])/.exec(system)![1]!) as string[];
  const seen = bodyText(body);
  if (stack.length === 1) {
    if (!seen.includes('spawn_thread')) {
      return { text: 'Streaming a plan: a child will update both files.', toolUse: { name: 'spawn_thread', input: { instructions: 'Update colors.txt and sizes.txt.', child_of: stack } } };
    }
    return { text: seen.includes(REASON) ? `Noted: ${REASON}.` : 'Waiting for the child.' };
  }
  const own = seen.slice(seen.indexOf('You are now inside the thread'));
  if (!own.includes('colors.txt","old_str')) {
    return { toolUse: { name: 'edit_file', input: { path: 'colors.txt', old_str: 'colour one', new_str: 'color one' } } };
  }
  if (!own.includes('sizes.txt","old_str')) {
    return { toolUse: { name: 'edit_file', input: { path: 'sizes.txt', old_str: 'small', new_str: 'large' } } };
  }
  return { toolUse: { name: 'close_thread', input: { thread_id: id, report_to_parent: 'Updated both files.' } } };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('the TUI in a real terminal', () => {
  it('reviews a child diff hunk by hunk; the rejection reason reaches the parent model', async () => {
    const repo = gitRepo(FILES);
    // Ink draws only the last frame when CI is set (even empty): the terminal must look like a user's.
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' },
    });
    try {
      await screen.waitFor(/Ask for a change/);
      screen.type('Please update both files');
      screen.press('Enter');
      await screen.waitFor(/Streaming a plan: a child will update both files\./);
      await screen.waitFor(/Review:/);
      // First entry (colors.txt): accept; second (sizes.txt): reject with a reason. Each key is
      // sent once the screen shows the previous one took effect, as a user would see it.
      screen.press('a');
      // Deciding moves the cursor on to the next undecided hunk: sizes.txt's.
      await screen.waitFor(/colors\.txt\s+✓1[\s\S]*1 undecided/);
      screen.press('r');
      await screen.waitFor(/Reason for rejecting/);
      screen.type(REASON);
      await screen.waitFor(new RegExp(REASON));
      screen.press('Enter');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      await screen.waitFor(/Noted: keep the old spelling\./);
      const next = api.requests.find((r) => bodyText(r.body).includes(REASON));
      expect(next).toBeDefined();
      expect(bodyText(next!.body)).toMatch(/Rejected[^"]*sizes\.txt/);
      // Nothing reached the working tree: that takes /diff.
      expect(readFileSync(join(repo, 'colors.txt'), 'utf8')).toBe('colour one\n');

      // /model switches the model for the next completion.
      screen.type('/model claude-other-model');
      screen.press('Enter');
      await screen.waitFor(/claude-other-model ·/);
      screen.type('one more thing');
      screen.press('Enter');
      await screen.waitFor(/one more thing[\s\S]*Noted: keep the old spelling\.[\s\S]*claude-other-model/);
      expect(api.requests.at(-1)!.body.model).toBe('claude-other-model');
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
