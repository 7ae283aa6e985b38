import { describe, expect, it } from 'vitest';
import { changesWaitLine, discardedMessage, keptMessage, leftBehindLine } from './pending-changes.js';
import { tallyParts } from './tui/diff-review-state.js';

describe('what the user is told about changes the working tree lacks', () => {
  it('counts files in words and says how to apply them or get them back', () => {
    expect(changesWaitLine(['a.txt'])).toBe('1 file changed in this session is not in your working tree: /diff to review and apply.');
    expect(changesWaitLine(['a.txt', 'b.txt'])).toBe('2 files changed in this session are not in your working tree: /diff to review and apply.');
    expect(keptMessage(['a.txt', 'b.txt'], '.infinity/patches/s1.patch')).toBe(
      '2 files changed in this session are not in your working tree (kept: a.txt, b.txt). ' +
        'Run infinity-code -c, then /diff to review and apply them. Also saved as a patch: git apply --3way .infinity/patches/s1.patch',
    );
    expect(keptMessage(['a.txt'])).toBe(
      '1 file changed in this session is not in your working tree (kept: a.txt). Run infinity-code -c, then /diff to review and apply it.',
    );
    expect(leftBehindLine(['a.txt'], '0123456789abcdef')).toBe(
      '1 file changed in the previous session is not in your working tree: infinity-code -r 01234567 brings it back (then /diff).',
    );
    expect(discardedMessage(['a.txt'])).toBe("Discarded the session's changes to 1 file. The conversation stays: infinity-code -c continues it.");
  });
});

describe("a review's tally per file", () => {
  it('says what is undecided in words, and only the decisions once all are made', () => {
    const text = (accepted: number, rejected: number, total: number) => tallyParts({ accepted, rejected, total }).map((p) => p.text).join(' ');
    expect(text(0, 0, 1)).toBe('1 undecided');
    expect(text(1, 0, 3)).toBe('✓1 2 of 3 undecided');
    expect(text(2, 1, 3)).toBe('✓2 ✗1');
    expect(tallyParts({ accepted: 0, rejected: 1, total: 1 })).toEqual([{ kind: 'rejected', text: '✗1' }]);
  });
});
