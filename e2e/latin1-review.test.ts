// A child's edit of a file that is not UTF-8 (Latin-1), through the built CLI against a local fake
// Messages API: reviewed hunk by hunk in the TUI (one hunk accepted, one rejected), and accepted
// headless with --yes. Either way the parent's sandbox, then the working tree, get exactly the
// expected bytes: the accepted hunks are applied as the bytes the child wrote, never re-encoded.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, git, gitRepo, runCli, tempDir } from './support/cli.js';
import { allText, lastResult, threadOf, toolCalls, type Msg } from './support/model.js';
import { TmuxScreen } from './support/tmux.js';

const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');
/** 40 lines of Latin-1 (0xE9 is é there; the bytes are not valid UTF-8), with accents in every line. */
const MENU = Array.from({ length: 40 }, (_, i) => `plat ${i} caf\xe9 cr\xe8me br\xfbl\xe9e`);
const bytesOf = (lines: string[]): Buffer => latin1(lines.join('\n') + '\n');
// The child's two edits, far apart (two hunks); the first turns one line into two.
const withFirst = (lines: string[]) => lines.map((l, i) => (i === 3 ? 'plat 3 \xe9t\xe9\nplat 3 bis d\xe9j\xe0' : l));
const withSecond = (lines: string[]) => lines.map((l, i) => (i === 36 ? 'plat 36 modifi\xe9' : l));
// GNU sed writes the \xHH bytes as they are: the child's edit is bytes, as a real tool's would be.
// In the C locale, as `.*` matches no invalid UTF-8 in a UTF-8 one (the terminal's may be).
const SED = String.raw`LC_ALL=C sed -i -e '4s/.*/plat 3 \xe9t\xe9\nplat 3 bis d\xe9j\xe0/' -e '37s/.*/plat 36 modifi\xe9/' menu.txt`;
const REPORT = 'Edited the menu in two places.';
const REASON = 'keep dish 36';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Root: delegate, then (once the report is in) show the checksum of menu.txt in its sandbox. Child: edit, report. */
function brain(body: FakeRequestBody) {
  const { id, stack } = threadOf(body);
  const messages = (body.messages ?? []) as Msg[];
  const calls = toolCalls(messages);
  if (stack.length === 1) {
    if (!calls.some((c) => c.name === 'spawn_thread')) {
      return { text: 'Delegating.', toolUse: { name: 'spawn_thread', input: { instructions: 'Edit menu.txt.', child_of: stack } } };
    }
    if (!allText(messages).includes(REPORT)) return { text: 'Waiting for the child.' };
    if (!calls.some((c) => c.name === 'execute_command')) {
      return { text: 'Checking the menu.', toolUse: { name: 'execute_command', input: { command: 'sha256sum menu.txt' } } };
    }
    return { text: `Checked: ${lastResult(messages)?.text.match(/[0-9a-f]{64}/)?.[0] ?? 'no checksum'}.` };
  }
  if (!calls.some((c) => c.name === 'execute_command')) return { toolUse: { name: 'execute_command', input: { command: SED } } };
  return { toolUse: { name: 'close_thread', input: { thread_id: id, report_to_parent: REPORT } } };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('a Latin-1 file edited by a child', () => {
  it('reviewed hunk by hunk in the TUI (first accepted, second rejected): exactly those bytes in the parent sandbox, then in the working tree', async () => {
    const repo = gitRepo({ 'menu.txt': bytesOf(MENU) }, { commandTimeoutMs: 30_000 });
    const expected = bytesOf(withFirst(MENU));
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' },
      width: 160,
      height: 50,
    });
    try {
      await screen.waitFor(/Ask for a change/);
      screen.type('Edit the menu');
      screen.press('Enter');
      await screen.waitFor(/Review:[\s\S]*M menu\.txt\s+2 undecided[\s\S]*Enter finish/);
      screen.press('j'); // onto the first hunk
      await screen.waitFor(/▸ · @@ -1,7 \+1,8 @@/);
      screen.press('a'); // accept it; the cursor moves on to the second
      await screen.waitFor(/✓ @@ -1,7 \+1,8 @@[\s\S]*▸ · @@ -34,7 \+35,7 @@/);
      screen.press('r');
      await screen.waitFor(/Reason for rejecting menu\.txt hunk 2/);
      screen.type(REASON);
      await screen.waitFor(new RegExp(REASON));
      screen.press('Enter');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      // The root looked at menu.txt in its own sandbox after the merge.
      await screen.waitFor(/Checked: [0-9a-f]{64}\./);
      expect(screen.screen()).toContain(`Checked: ${sha256(expected)}.`);
      expect(readFileSync(join(repo, 'menu.txt')).equals(bytesOf(MENU))).toBe(true);

      screen.type('/diff');
      screen.press('Enter');
      await screen.waitFor(/Review: Session changes → working tree[\s\S]*Enter finish/);
      screen.press('A');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      await screen.waitFor(/Applied 1 file to the working tree: menu\.txt\./);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
    expect(readFileSync(join(repo, 'menu.txt')).equals(expected)).toBe(true);
  });

  it('accepted headless with --yes: exactly the edited bytes in the working tree', async () => {
    const repo = gitRepo({ 'menu.txt': bytesOf(MENU) }, { commandTimeoutMs: 30_000 });
    const expected = bytesOf(withSecond(withFirst(MENU)));
    const r = await runCli(['-p', 'Edit the menu', '--yes'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Checked: ${sha256(expected)}.`);
    expect(readFileSync(join(repo, 'menu.txt')).equals(expected)).toBe(true);
    expect(git(repo, 'status', '--porcelain')).toBe(' M menu.txt\n');
  });
});
