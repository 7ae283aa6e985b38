// Reviewing in a real terminal (tmux, the built CLI against the fake Messages API): a file longer
// than the screen is read to its last line before it is accepted, and accepting only some of a
// file's hunks is not taken for the user's own edit of that file.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { blocks, lastResult, type Msg } from './support/model.js';
import { TmuxScreen } from './support/tmux.js';

const lines = (n: number, label = 'line') => Array.from({ length: n }, (_, i) => `${label} ${i + 1}`).join('\n') + '\n';
const BIG = lines(200, 'big');
const FORTY = lines(40);

/**
 * Root only: "add the big file" creates a 200-line file; "edit a.txt" changes its lines 3 and 35
 * (two hunks), one edit at a time; then it answers.
 */
function brain(body: FakeRequestBody) {
  const messages = (body.messages ?? []) as Msg[];
  const done = lastResult(messages);
  const last = blocks(messages.slice(-1)).find((b) => b.type === 'text');
  const asked = last?.type === 'text' ? last.text.trim() : '';
  if (asked === 'add the big file') return { toolUse: { name: 'create_file', input: { path: 'big.txt', content: BIG } } };
  if (asked === 'edit a.txt') return { toolUse: { name: 'edit_file', input: { path: 'a.txt', old_str: 'line 3\n', new_str: 'line 3 agent\n' } } };
  if (done?.name === 'edit_file' && !JSON.stringify(messages).includes('line 35 agent')) {
    return { toolUse: { name: 'edit_file', input: { path: 'a.txt', old_str: 'line 35\n', new_str: 'line 35 agent\n' } } };
  }
  return { text: done ? `Finished: ${done.name}.` : 'Nothing to do.' };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

/** The review box of a screen (the transcript above it shows a few lines of the file too). */
const review = (screen: string) => screen.slice(screen.lastIndexOf('Review: Session changes'));
/** The file's lines in the review's view, by number. */
const inView = (screen: string) => [...review(screen).matchAll(/\+big (\d+)\s/g)].map((m) => Number(m[1]));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function start(repo: string): TmuxScreen {
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
  // Ink draws only the last frame when CI is set: the terminal must look like a user's.
  return TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], { cwd: repo, env, width: 120, height: 40 });
}

describe('reviewing in the TUI', () => {
  it('a 200-line file: scrolled page by page and to its end, printed whole on request, accepted once seen', async () => {
    const repo = gitRepo({ 'README.md': 'readme\n' });
    const screen = start(repo);
    try {
      // The status line says whether commands are confined, in words: not the backend's name.
      const opened = await screen.waitFor(/sandbox (on|off)/);
      expect(opened).not.toMatch(/overlay|copy|userns/);
      screen.type('add the big file');
      screen.press('Enter');
      await screen.waitFor(/Finished: create_file\./);
      screen.type('/diff');
      screen.press('Enter');
      // 40 rows leave 20 lines of the hunk in view; the rest is said to be there.
      const first = await screen.waitFor(/Review: Session changes → working tree[\s\S]*lines 1–20 of 200/);
      expect(inView(first)).toEqual(range(1, 20));
      expect(review(first)).toContain('… 180 more lines');
      expect(first).toContain('⇧↑↓ line · PgUp/PgDn page · g/G top/bottom · e show all above');

      screen.press('PageDown');
      const second = await screen.waitFor(/lines 21–40 of 200/);
      expect(inView(second)).toEqual(range(21, 40));
      expect(review(second)).toMatch(/… 20 more lines above[\s\S]*… 160 more lines/);
      screen.press('G');
      const end = await screen.waitFor(/lines 181–200 of 200/);
      expect(inView(end)).toEqual(range(181, 200));
      screen.press('S-Up');
      await screen.waitFor(/lines 180–199 of 200/);
      screen.press('g');
      await screen.waitFor(/lines 1–20 of 200/);

      // All of it, above the review: every line is in the terminal's scrollback.
      screen.press('e');
      await screen.waitFor(/shown whole above \(e again\)/);
      const scrollback = screen.scrollback();
      const printed = scrollback.slice(scrollback.indexOf('Under review: big.txt, all 200 lines'), scrollback.lastIndexOf('Review: Session changes'));
      expect([...printed.matchAll(/\+big (\d+)\s/g)].map((m) => Number(m[1]))).toEqual(range(1, 200));

      screen.press('a');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      await screen.waitFor(/Applied 1 file to the working tree: big\.txt\./);
      expect(readFileSync(join(repo, 'big.txt'), 'utf8')).toBe(BIG);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });

  it("accepting one of a file's two hunks is not reported as the user's edit; the user's own edit of it then is", async () => {
    const repo = gitRepo({ 'a.txt': FORTY });
    const screen = start(repo);
    try {
      await screen.waitFor(/sandbox (on|off)/);
      screen.type('edit a.txt');
      screen.press('Enter');
      await screen.waitFor(/Finished: edit_file\./);
      screen.type('/diff');
      screen.press('Enter');
      await screen.waitFor(/Review: Session changes → working tree[\s\S]*M a\.txt {2}2 undecided/);
      screen.press('j'); // the first hunk
      screen.press('a');
      await screen.waitFor(/M a\.txt {2}✓1 {2}1 of 2 undecided/);
      screen.press('r');
      await screen.waitFor(/Reason for rejecting a\.txt hunk 2/);
      screen.type('not this one');
      screen.press('Enter');
      await screen.waitFor(/all decided/);
      screen.press('Enter');
      await screen.waitFor(/Applied 1 file to the working tree: a\.txt\./);
      // Part of the change is in the user's file: neither the snapshot's version nor the agent's.
      expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe(FORTY.replace('line 3\n', 'line 3 agent\n'));

      // The watcher's next look, after an edit of the user's elsewhere, names that file alone.
      writeFileSync(join(repo, 'notes.txt'), 'a note\n');
      const notice = await screen.waitFor(/You edited \d+ files? since the session began \([^)]*\)/);
      expect(notice).toContain('You edited 1 file since the session began (notes.txt)');
      // The user's own change to a.txt is theirs.
      writeFileSync(join(repo, 'a.txt'), FORTY.replace('line 3\n', 'line 3 agent\n').replace('line 20\n', 'line 20 mine\n'));
      await screen.waitFor(/You edited 2 files since the session began \(a\.txt, notes\.txt\)/);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
