import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { act } from 'react';
import { beforeAll, describe, expect, it } from 'vitest';
import { DiffReview } from './diff-review.js';
import { initialReview, reduceReview, toDecision, type ReviewAction } from './diff-review-state.js';
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

async function mount(diff: ReviewDiff, maxHunkLines?: number) {
  const decisions: ReviewDecision[] = [];
  let ui!: ReturnType<typeof render>;
  await act(async () => {
    ui = render(
      <DiffReview diff={diff} title="Changes from worker" isActive onDecision={(d) => decisions.push(d)} {...(maxHunkLines ? { maxHunkLines } : {})} />,
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
    const lines = Array.from({ length: 30 }, (_, i) => `+line ${i}`);
    const long: ReviewDiff = { files: [{ path: 'big.txt', status: 'modified', hunks: [{ id: 'big.txt#0', header: '@@ -1 +1,30 @@', lines }], decisionIds: ['big.txt#0'] }] };
    const r = await mount(long, 5);
    expect(r.frame()).toContain('+line 4');
    expect(r.frame()).not.toContain('+line 5');
    expect(r.frame()).toContain('… 25 more lines');
    await r.press('r', 'too big', '\r', '\r');
    expect(r.decisions).toEqual([{ accepted: [], rejected: [{ id: 'big.txt#0', reason: 'too big' }] }]);
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
