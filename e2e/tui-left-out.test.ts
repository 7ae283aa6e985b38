// The TUI shows what a diff leaves out, and what a mode change or a symlink is, both in the review
// of a child's report and in /diff; neither merges nor applies the left-out changes.
import { lstatSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { TmuxScreen } from './support/tmux.js';
import { threadOf } from './support/model.js';

const FILES = { 'colors.txt': 'colour one\n', 'tool.sh': 'echo hi\n' };
const CONFIG = { commandTimeoutMs: 30_000 };

function brain(body: FakeRequestBody) {
  const { id, stack } = threadOf(body);
  const seen = JSON.stringify(body.messages ?? []);
  if (stack.length === 1) {
    if (!seen.includes('ln -s ../outside up')) {
      return { text: 'A link of my own first.', toolUse: { name: 'execute_command', input: { command: 'ln -s ../outside up' } } };
    }
    if (!seen.includes('spawn_thread')) {
      return { text: 'Delegating.', toolUse: { name: 'spawn_thread', input: { instructions: 'Fix colors.txt.', child_of: stack } } };
    }
    return { text: seen.includes('These changes were left out and not merged') ? 'Heard what was left out.' : 'Waiting for the child.' };
  }
  const own = seen.slice(seen.indexOf('You are now inside the thread'));
  if (!own.includes('colors.txt","old_str')) {
    return { toolUse: { name: 'edit_file', input: { path: 'colors.txt', old_str: 'colour one', new_str: 'color one' } } };
  }
  if (!own.includes('ln -s /etc/passwd')) {
    const command = 'chmod +x tool.sh && ln -s colors.txt colors-link && ln -s /etc/passwd pw && mkdir -p .infinity && echo x > .infinity/config.json';
    return { toolUse: { name: 'execute_command', input: { command } } };
  }
  return { toolUse: { name: 'close_thread', input: { thread_id: id, report_to_parent: 'Fixed colors.txt.' } } };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('left-out changes in the TUI', () => {
  it("a child's review and /diff show modes, symlink targets and what is left out with why; accepting all applies only the rest", async () => {
    const repo = gitRepo(FILES, CONFIG);
    const config = readFileSync(join(repo, '.infinity', 'config.json'));
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' },
      width: 200,
      height: 50,
    });
    try {
      await screen.waitFor(/Ask for a change/);
      screen.type('Fix colors.txt');
      screen.press('Enter');
      const child = await screen.waitFor(/Review:[\s\S]*Enter finish/);
      expect(child).toMatch(/M tool\.sh\s+mode 100644 → 100755/);
      expect(child).toMatch(/A colors-link\s+symlink → colors\.txt/);
      expect(child).toMatch(/⊘ \.infinity\/config\.json — left out: inside \.infinity\/, which holds infinity-code's own configuration and sessions/);
      expect(child).toMatch(/⊘ pw — left out: a symbolic link to \/etc\/passwd, which is outside the repository/);
      expect(child).not.toMatch(/⊘ up/); // the parent's own link is not the child's change
      screen.press('A');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      await screen.waitFor(/Heard what was left out\./);
      const note = api.requests.map((r) => JSON.stringify(r.body.messages)).find((m) => m.includes('These changes were left out and not merged'))!;
      expect(note).toMatch(/- pw: a symbolic link to \/etc\/passwd/);

      screen.type('/diff');
      screen.press('Enter');
      const diff = await screen.waitFor(/Review: Session changes → working tree[\s\S]*Enter finish/);
      expect(diff).toMatch(/M tool\.sh\s+mode 100644 → 100755/);
      expect(diff).toMatch(/A colors-link\s+symlink → colors\.txt/);
      expect(diff).toMatch(/⊘ up — left out: a symbolic link to \.\.\/outside, which is outside the repository/);
      screen.press('A');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      // The files are named; the line is long enough to wrap.
      await screen.waitFor(/Applied 3 files to the working tree: [\s\S]*?tool\.sh[\s\S]*?\.\s+Left\s+out\s+\(never\s+applied\):\s+up\s+—\s+a\s+symbolic\s+link\s+to\s+\.\.\/outside/);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
    expect(readFileSync(join(repo, 'colors.txt'), 'utf8')).toBe('color one\n');
    expect(statSync(join(repo, 'tool.sh')).mode & 0o111).not.toBe(0);
    expect(lstatSync(join(repo, 'colors-link')).isSymbolicLink()).toBe(true);
    for (const p of ['up', 'pw']) expect(lstatSync(join(repo, p), { throwIfNoEntry: false }), p).toBeUndefined();
    expect(readFileSync(join(repo, '.infinity', 'config.json')).equals(config)).toBe(true);
  });
});
