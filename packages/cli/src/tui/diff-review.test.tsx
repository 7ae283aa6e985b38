import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { act } from 'react';
import { beforeAll, describe, expect, it } from 'vitest';
import { DiffReview, type HunkInFull } from './diff-review.js';
import { hunkView, initialReview, isShownInFull, reduceReview, toDecision, viewWindow, type ReviewAction } from './diff-review-state.js';
import { allHunkIds, isReviewDiff, type ReviewDecision, type ReviewDiff } from '../review-diff.js';

beforeAll(() => {
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
});

const DIFF: ReviewDiff = {
  files: [
    {
      path: 'src/a.ts',
      status: 'modified',
      hunks: [
        { id: 'src/a.ts#0', header: '@@ -1,2 +1,2 @@', lines: [' keep', '-old one', '+new one'] },
        { id: 'src/a.ts#1', header: '@@ -9,1 +9,1 @@', lines: ['-old two', '+new two'] },
      ],
      decisionIds: ['src/a.ts#0', 'src/a.ts#1'],
    },
    // No text hunks (a binary): one decision, under the id the sandbox gave it.
    { path: 'img/logo.png', status: 'added', hunks: [], decisionIds: ['img/logo.png#0'] },
  ],
};

/** A new file of `n` lines ("+line 1" to "+line n"), as one hunk. */
function newFile(n: number, path = 'big.txt'): ReviewDiff['files'][number] {
  const lines = Array.from({ length: n }, (_, i) => `+line ${i + 1}`);
  return { path, status: 'added', hunks: [{ id: `${path}#0`, header: `@@ -0,0 +1,${n} @@`, lines }], decisionIds: [`${path}#0`] };
}

async function mount(diff: ReviewDiff, maxHunkLines?: number, opts: { showInFull?: HunkInFull[] } = {}) {
  const decisions: ReviewDecision[] = [];
  let ui!: ReturnType<typeof render>;
  const shown = opts.showInFull;
  await act(async () => {
    ui = render(
      <DiffReview
        diff={diff}
        title="Changes from worker"
        isActive
        onDecision={(d) => decisions.push(d)}
        {...(maxHunkLines ? { maxHunkLines } : {})}
        {...(shown ? { onShowInFull: (h: HunkInFull) => shown.push(h) } : {})}
      />,
    );
  });
  const press = async (...keys: string[]) => {
    for (const k of keys) await act(async () => void ui.stdin.write(k));
  };
  return { decisions, press, frame: () => stripVTControlCharacters(ui.lastFrame() ?? ''), ui };
}

describe('<DiffReview>', () => {
  it('lists the files, then the hunks of the file under the cursor with the focused one expanded', async () => {
    const r = await mount(DIFF);
    const f = r.frame();
    expect(f).toContain('Review: Changes from worker (2 files, +2 -2)');
    // Undecided files say so in words (a bare "/2" read as nothing).
    expect(f).toMatch(/▸ M src\/a\.ts {2}2 undecided[\s│]+A img\/logo\.png {2}1 undecided/);
    expect(f).toMatch(/src\/a\.ts[\s│]+· @@ -1,2 \+1,2 @@[\s│]+keep[\s│]+-old one[\s│]+\+new one[\s│]+· @@ -9,1 \+9,1 @@[\s│]+↑↓ move/);
    await r.press('\u001b[B', '\u001b[B'); // down twice: onto the second hunk
    expect(r.frame()).toMatch(/▸ · @@ -9,1 \+9,1 @@[\s│]+-old two[\s│]+\+new two/);
    expect(r.frame()).not.toContain('-old one');
  });

  it('accepts a hunk, rejects another with a typed reason, decides a file without hunks, and hands back both', async () => {
    const r = await mount(DIFF);
    await r.press('j', 'a'); // accept src/a.ts#0; the cursor moves to src/a.ts#1
    await r.press('r');
    expect(r.frame()).toContain('Reason for rejecting src/a.ts hunk 2:');
    await r.press('too', ' clever', '\u007f', '\u007f', 'er!'); // Backspace twice, retype
    expect(r.frame()).toContain('Reason for rejecting src/a.ts hunk 2: too clever!');
    await r.press('\r');
    // The file without text hunks (a binary) is still one decision.
    expect(r.frame()).toMatch(/img\/logo\.png[\s│]+▸ · \(no text changes: added\)/);
    await r.press('a');
    expect(r.decisions).toEqual([]); // nothing is handed back before Enter
    await r.press('\r');
    expect(r.decisions).toEqual([
      { accepted: ['src/a.ts#0', 'img/logo.png#0'], rejected: [{ id: 'src/a.ts#1', reason: 'too clever!' }] },
    ]);
    await r.press('\r');
    expect(r.decisions).toHaveLength(1); // decided once
  });

  it('cancels a reason with Esc, and will not finish while hunks are undecided', async () => {
    const r = await mount(DIFF);
    await r.press('r', 'nope', '\u001b');
    expect(r.frame()).not.toContain('Reason for rejecting');
    await r.press('\r');
    expect(r.frame()).toContain('3 hunks still undecided.');
    expect(r.decisions).toEqual([]);
  });

  it('decides a whole file from its line, and clamps long hunks', async () => {
    const r = await mount({ files: [newFile(30)] }, 7); // 5 lines of it, the footer and a line above it
    expect(r.frame()).toContain('+line 5');
    expect(r.frame()).not.toContain('+line 6');
    expect(r.frame()).toContain('… 25 more lines');
    await r.press('r', 'too big', '\r', '\r');
    expect(r.decisions).toEqual([{ accepted: [], rejected: [{ id: 'big.txt#0', reason: 'too big' }] }]);
  });

  it('scrolls a hunk longer than the view by line, page and to either end, saying where it is', async () => {
    const r = await mount({ files: [newFile(200)] }, 29);
    const inView = () => [...r.frame().matchAll(/\+line (\d+)/g)].map((m) => Number(m[1]));
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(inView()).toEqual(range(1, 27));
    expect(r.frame()).toContain('… 173 more lines');
    expect(r.frame()).toContain('lines 1–27 of 200 · ⇧↑↓ line · PgUp/PgDn page · g/G top/bottom');
    await r.press(' '); // a page down
    expect(inView()).toEqual(range(28, 54));
    expect(r.frame()).toMatch(/… 27 more lines above[\s\S]*… 146 more lines/);
    expect(r.frame()).toContain('lines 28–54 of 200');
    await r.press('K'); // a line up
    expect(r.frame()).toContain('lines 27–53 of 200');
    await r.press('\u001b[1;2B', '\u001b[1;2B'); // Shift+↓ twice
    expect(r.frame()).toContain('lines 29–55 of 200');
    await r.press('G'); // the bottom: the last line is on screen
    expect(inView()).toEqual(range(174, 200));
    expect(r.frame()).toContain('lines 174–200 of 200');
    expect(r.frame()).not.toMatch(/more lines\n/);
    await r.press('\u001b[6~', 'J'); // PgDn and a line down at the bottom: nowhere further
    expect(r.frame()).toContain('lines 174–200 of 200');
    await r.press('b', '\u001b[5~'); // two pages up
    expect(r.frame()).toContain('lines 120–146 of 200');
    await r.press('g');
    expect(inView()).toEqual(range(1, 27));
    // Scrolling decided nothing; accepting does, as before.
    await r.press('a', '\r');
    expect(r.decisions).toEqual([{ accepted: ['big.txt#0'], rejected: [] }]);
  });

  it('moves between hunks with the arrows and j/k still, a new hunk shown from its top', async () => {
    const r = await mount({ files: [newFile(40, 'one.txt'), newFile(3, 'two.txt')] }, 12);
    await r.press('G');
    expect(r.frame()).toContain('lines 31–40 of 40');
    await r.press('j'); // onto one.txt's hunk: the same lines are shown, where they were
    expect(r.frame()).toContain('lines 31–40 of 40');
    await r.press('\u001b[B'); // down: two.txt, short enough to need no scrolling
    expect(r.frame()).toMatch(/two\.txt[\s│]+· @@ -0,0 \+1,3 @@[\s│]+\+line 1[\s│]+\+line 2[\s│]+\+line 3/);
    expect(r.frame()).not.toContain('lines ');
    await r.press('k', 'k'); // back to one.txt: from its top again
    expect(r.frame()).toContain('lines 1–10 of 40');
  });

  it('e prints the whole hunk above the review where the review can do that, and the footer says so', async () => {
    const shown: HunkInFull[] = [];
    const r = await mount({ files: [newFile(200)] }, 29, { showInFull: shown });
    expect(r.frame()).toContain('· e show all above');
    await r.press('e');
    expect(shown).toEqual([{ path: 'big.txt', position: '', header: '@@ -0,0 +1,200 @@', lines: newFile(200).hunks[0].lines }]);
    expect(r.frame()).toContain('· shown whole above (e again)');
    // Without a place to print it, e is neither offered nor taken.
    const plain = await mount({ files: [newFile(200)] }, 29);
    expect(plain.frame()).not.toContain(' e ');
    await plain.press('e');
    expect(plain.frame()).toContain('lines 1–27 of 200');
  });

  it('shows mode changes, symlink targets and what the diff left out, which takes no decision', async () => {
    const diff: ReviewDiff = {
      files: [
        { path: 'tool.sh', status: 'modified', hunks: [], decisionIds: ['tool.sh#0'], oldMode: '100644', newMode: '100755' },
        {
          path: 'link',
          status: 'added',
          hunks: [{ id: 'link#0', header: '@@ -0,0 +1 @@', lines: ['+docs/a.md'] }],
          decisionIds: ['link#0'],
          newMode: '120000',
          linkTarget: 'docs/a.md',
        },
      ],
      leftOut: [
        { path: 'pw', reason: 'a symbolic link to /etc/passwd, which is outside the repository' },
        { path: 'sub/', reason: 'sub/ holds a nested git repository; its files were not included' },
      ],
    };
    const r = await mount(diff);
    const f = r.frame();
    expect(f).toMatch(/M tool\.sh\s+mode 100644 → 100755/);
    expect(f).toMatch(/A link\s+symlink → docs\/a\.md/);
    expect(f).toContain('(no text changes: mode 100644 → 100755)');
    expect(f).toMatch(/⊘ pw — left out: a symbolic link to \/etc\/passwd, which is outside the repository/);
    expect(f).toMatch(/⊘ sub\/ — left out: sub\/ holds a nested git repository; its files were not included/);
    await r.press('A', '\r');
    expect(r.decisions).toEqual([{ accepted: ['tool.sh#0', 'link#0'], rejected: [] }]);
  });
});

describe('review navigation state', () => {
  const run = (...actions: ReviewAction[]) => actions.reduce(reduceReview, initialReview(DIFF));

  it('accepting a file line decides all its hunks; A and R decide everything', () => {
    expect(toDecision(run({ type: 'accept', scope: 'entry' })).accepted).toEqual(['src/a.ts#0', 'src/a.ts#1']);
    expect(toDecision(run({ type: 'accept', scope: 'all' })).accepted).toEqual(allHunkIds(DIFF));
    const rejected = run({ type: 'reject', scope: 'all' }, { type: 'reason-input', text: 'later\n' }, { type: 'reason-confirm' });
    expect(toDecision(rejected)).toEqual({ accepted: [], rejected: allHunkIds(DIFF).map((id) => ({ id, reason: 'later' })) });
    expect(run({ type: 'accept', scope: 'all' }, { type: 'finish' }).done).toBe(true);
  });

  it('a later decision overrides an earlier one, and the cursor stays in range', () => {
    const s = run({ type: 'move', by: 1 }, { type: 'accept', scope: 'entry' }, { type: 'move', by: -1 }, { type: 'reject', scope: 'entry' }, { type: 'reason-confirm' });
    expect(toDecision(s)).toEqual({ accepted: [], rejected: [{ id: 'src/a.ts#0', reason: '' }] });
    expect(run({ type: 'move', by: -5 }).cursor).toBe(0);
    expect(run({ type: 'move', by: 50 }).cursor).toBe(initialReview(DIFF).entries.length - 1);
  });

  it('scrolls the shown hunk within its length, clamped however the view changes, and back to the top for another hunk', () => {
    const diff: ReviewDiff = { files: [newFile(200), newFile(5, 'small.txt')] };
    const at = (...actions: ReviewAction[]) => actions.reduce(reduceReview, initialReview(diff));
    const page = (dir: 1 | -1): ReviewAction => ({ type: 'scroll', by: 'page', dir, window: 27 });
    expect(hunkView(at(page(1)), 27)).toEqual({ start: 27, end: 54, total: 200 });
    expect(hunkView(at(page(1), page(1), { type: 'scroll', by: 'line', dir: -1, window: 27 }), 27)).toEqual({ start: 53, end: 80, total: 200 });
    const bottom = at({ type: 'scroll', by: 'end', dir: 1, window: 27 });
    expect(hunkView(bottom, 27)).toEqual({ start: 173, end: 200, total: 200 });
    expect(reduceReview(bottom, page(1)).scroll).toBe(173);
    expect(reduceReview(bottom, { type: 'scroll', by: 'end', dir: -1, window: 27 }).scroll).toBe(0);
    expect(at(page(-1)).scroll).toBe(0);
    // A taller terminal shows more: the view never starts past the last full page.
    expect(hunkView(bottom, 50)).toEqual({ start: 150, end: 200, total: 200 });
    expect(hunkView(bottom, 500)).toEqual({ start: 0, end: 200, total: 200 });
    // Scrolling after a resize starts from what was in view.
    expect(reduceReview({ ...bottom }, { type: 'scroll', by: 'line', dir: -1, window: 50 }).scroll).toBe(149);
    // The file's line shows its first hunk: going onto that hunk keeps the place, another hunk starts at its top.
    expect(reduceReview(bottom, { type: 'move', by: 1 }).scroll).toBe(173);
    expect(reduceReview(bottom, { type: 'move', by: 2 }).scroll).toBe(0);
    // Deciding moves on to the next undecided hunk, shown from its top.
    const decided = reduceReview(reduceReview(bottom, { type: 'move', by: 1 }), { type: 'accept', scope: 'entry' });
    expect(decided.entries[decided.cursor]).toMatchObject({ kind: 'hunk', id: 'small.txt#0' });
    expect(decided.scroll).toBe(0);
  });

  it('gives a hunk longer than the room two lines fewer (for the lines around it), so the review is no taller', () => {
    const diff: ReviewDiff = { files: [newFile(200), newFile(29, 'fits.txt')] };
    const s = initialReview(diff);
    expect(viewWindow(s, 29)).toBe(27);
    expect(viewWindow(reduceReview(s, { type: 'move', by: 2 }), 29)).toBe(29);
    expect(viewWindow(s, 2)).toBe(1);
  });

  it('records which hunk was printed whole, and prints nothing for a file without text hunks', () => {
    const diff: ReviewDiff = { files: [newFile(200), { path: 'logo.png', status: 'added', hunks: [], decisionIds: ['logo.png#0'] }] };
    const printed = reduceReview(initialReview(diff), { type: 'show-in-full' });
    expect(printed.shownInFull).toEqual({ file: 0, hunk: 0 });
    expect(isShownInFull(printed)).toBe(true);
    expect(isShownInFull(reduceReview(printed, { type: 'move', by: 2 }))).toBe(false);
    const binary = reduceReview(initialReview(diff), { type: 'move', by: 2 });
    expect(reduceReview(binary, { type: 'show-in-full' }).shownInFull).toBeNull();
  });

  it('checks the shape of attachments before treating them as diffs', () => {
    expect(isReviewDiff(DIFF)).toBe(true);
    expect(isReviewDiff({ diff: 'patch text' })).toBe(false);
    expect(isReviewDiff({ files: [{ path: 'a', status: 'copied', hunks: [], decisionIds: ['a#0'] }] })).toBe(false);
    expect(isReviewDiff({ files: [{ path: 'a', status: 'added', hunks: [{ id: 'a#0', header: '@@', lines: [1] }], decisionIds: ['a#0'] }] })).toBe(false);
    // Decisions are recorded under the ids the sandbox gave: a diff without them cannot be decided on.
    expect(isReviewDiff({ files: [{ path: 'a', status: 'added', hunks: [] }] })).toBe(false);
    expect(isReviewDiff({ files: [{ path: 'a', status: 'added', hunks: [{ header: '@@', lines: [] }], decisionIds: ['a#0'] }] })).toBe(false);
    expect(isReviewDiff(null)).toBe(false);
    expect(isReviewDiff({ files: [], leftOut: [{ path: 'pw', reason: 'outside' }] })).toBe(true);
    expect(isReviewDiff({ files: [], leftOut: [{ path: 'pw' }] })).toBe(false);
    expect(isReviewDiff({ files: [{ path: 'a', status: 'added', hunks: [], decisionIds: ['a#0'], newMode: 755 }] })).toBe(false);
  });
});
