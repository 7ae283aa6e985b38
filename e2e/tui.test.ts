// The terminal UI in a real terminal (tmux) against a local fake Messages API: the user types a
// task, sees streamed text, reviews a child's diff hunk by hunk, and the rejection reason reaches
// the model.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { TmuxScreen } from './support/tmux.js';
import { threadOf } from './support/model.js';

const REASON = 'keep the old spelling';
const FILES = { 'colors.txt': 'colour one\n', 'sizes.txt': 'small\n' };

function bodyText(body: FakeRequestBody): string {
  return JSON.stringify(body.messages ?? []);
}

/** Root: delegate, then wait; child: change two files, then close with a report. */
function brain(body: FakeRequestBody) {
  const { id, stack } = threadOf(body);
  const seen = bodyText(body);
  if (stack.length === 1) {
    if (!seen.includes('spawn_thread')) {
      return { text: 'Streaming a plan: a child will update both files.', toolUse: { name: 'spawn_thread', input: { instructions: 'Update colors.txt and sizes.txt.', child_of: stack } } };
    }
    if (seen.includes(REASON)) return { text: `Noted: ${REASON}.` };
    return { text: seen.includes('The user reviewed these changes') ? 'The review is in.' : 'Waiting for the child.' };
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

  it('a review left open when the user quits is asked again by -c, and its decision reaches the parent', async () => {
    const repo = gitRepo(FILES);
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
    const command = (...args: string[]) => ['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN, ...args];
    const first = TmuxScreen.start(command(), { cwd: repo, env });
    try {
      await first.waitFor(/Ask for a change/);
      first.type('Please update both files');
      first.press('Enter');
      await first.waitFor(/Review:[\s\S]*colors\.txt/);
      // Quit without deciding: Ctrl+C twice.
      first.press('C-c');
      await first.waitFor(/Press Ctrl\+C again to quit/);
      first.press('C-c');
      await first.waitForExit();
    } finally {
      first.kill();
    }
    const reportsBefore = api.requests.filter((r) => bodyText(r.body).includes('Updated both files')).length;

    const second = TmuxScreen.start(command('-c'), { cwd: repo, env });
    try {
      // The earlier transcript, then the same review again.
      await second.waitFor(/Please update both files[\s\S]*Review:[\s\S]*colors\.txt[\s\S]*sizes\.txt/);
      second.press('A');
      await second.waitFor(/all decided/);
      second.press('Enter');
      await second.waitFor(/The review is in\./);
      const after = api.requests.filter((r) => bodyText(r.body).includes('Updated both files')).slice(reportsBefore);
      // The parent heard the decision once, with both files accepted.
      const toParent = after.filter((r) => /Accepted[^"]*colors\.txt/.test(bodyText(r.body)));
      expect(toParent.length).toBeGreaterThan(0);
      expect(bodyText(toParent[0].body)).toMatch(/Accepted[^"]*sizes\.txt/);
      expect(bodyText(api.requests.at(-1)!.body).match(/The user reviewed these changes/g)).toHaveLength(1);
      // Still nothing in the working tree: that takes /diff.
      expect(readFileSync(join(repo, 'colors.txt'), 'utf8')).toBe('colour one\n');
    } finally {
      second.press('C-c');
      second.press('C-c');
      second.kill();
    }
  });

  it('marks files the user edits meanwhile, warns in a review that touches them, /refresh hands them over, and what /diff applies is not counted', async () => {
    const repo = gitRepo(FILES);
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], { cwd: repo, env });
    try {
      // The session (and its snapshot of the tree) is open once the status line names the sandbox.
      await screen.waitFor(/sandbox (on|off)/);
      writeFileSync(join(repo, 'colors.txt'), 'colour one\nadded by the user\n');
      await screen.waitFor(/You edited 1 file since the session began \(colors\.txt\)/);
      screen.type('Please update both files');
      screen.press('Enter');
      await screen.waitFor(/Review:[\s\S]*⚠ You edited colors\.txt yourself[\s\S]*colors\.txt .*edited by you/);
      screen.press('A');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      await screen.waitFor(/The review is in\./);
      screen.type('/refresh');
      screen.press('Enter');
      // The root's sandbox changed colors.txt itself (the accepted review): its version wins there.
      await screen.waitFor(/The agent had changed colors\.txt itself/);
      await screen.waitFor(/Ask for a change/);
      expect(screen.screen()).not.toMatch(/You edited 1 file/);
      // The user's file is untouched by all this.
      expect(readFileSync(join(repo, 'colors.txt'), 'utf8')).toBe('colour one\nadded by the user\n');

      // Files the session's own changes put in the tree are not the user's edits.
      screen.type('/diff');
      screen.press('Enter');
      await screen.waitFor(/Review: Session changes → working tree/);
      screen.press('A');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      await screen.waitFor(/Applied 2 files to the working tree: [^\n]*sizes\.txt/);
      expect(readFileSync(join(repo, 'sizes.txt'), 'utf8')).toBe('large\n');
      writeFileSync(join(repo, 'notes.txt'), 'a note\n');
      await screen.waitFor(/You edited 1 file since the session began \(notes\.txt\)/);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
