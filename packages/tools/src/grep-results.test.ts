import { describe, expect, it } from 'vitest';
import { ContentMatches, FileMatches, GREP_LIMITS, MatchCounts } from './grep-results.js';

const match = (path: string, line: number, text: string, type: 'match' | 'context' = 'match') =>
  JSON.stringify({ type, data: { path: { text: path }, lines: { text: `${text}\n` }, line_number: line } });

const page = { offset: 0, head: 5, maxChars: GREP_LIMITS.maxChars };

describe('grep results', () => {
  it('stop collecting at the cap and say the search stopped, without offering an offset', () => {
    const content = new ContentMatches({ lineNumbers: true, context: false });
    let accepted = 0;
    for (let i = 1; i <= GREP_LIMITS.maxContentLines + 10; i++) {
      if (!content.add(match(`f${String(i % 7)}.ts`, i, `hit ${i}`))) break;
      accepted++;
    }
    expect(accepted).toBe(GREP_LIMITS.maxContentLines);
    expect(content.complete).toBe(false);
    const r = content.render(page);
    expect(r.text.split('\n')[0]).toBe(`Found more than ${GREP_LIMITS.maxContentLines} matching lines in 7 files (the search stopped early).`);
    expect(r.text.split('\n').at(-1)).toBe(
      `[Showing lines 1-5 of the first ${GREP_LIMITS.maxContentLines} found; the search stopped there and more match: ` +
        'narrow the search with path, glob, type or a more specific pattern.]',
    );

    const files = new FileMatches();
    for (let i = 0; i < GREP_LIMITS.maxFiles; i++) expect(files.add(`f${i}`)).toBe(true);
    expect(files.add('one-more')).toBe(false);
    expect(files.render(page).text.split('\n')[0]).toBe(`Found more than ${GREP_LIMITS.maxFiles} files.`);
  });

  it('merge context and matches by line, mark gaps between context groups, and show each file once', () => {
    const content = new ContentMatches({ lineNumbers: true, context: true });
    for (const line of [
      match('b.ts', 1, 'one', 'context'),
      match('b.ts', 2, 'two'),
      match('b.ts', 3, 'three', 'context'),
      match('b.ts', 9, 'nine'),
      match('a.ts', 4, 'four'),
      '{"type":"summary","data":{}}',
      '',
    ]) {
      content.add(line);
    }
    expect(content.render({ ...page, head: 100 }).text).toBe(
      ['Found 3 matching lines in 2 files.', 'a.ts', '4:four', '', 'b.ts', '1-one', '2:two', '3-three', '--', '9:nine'].join('\n'),
    );
  });

  it('count entries are path NUL count, sorted by path; entries without a NUL are skipped', () => {
    const counts = new MatchCounts();
    for (const line of ['b.ts\u00003', 'a:b.ts\u00001', 'no separator', '']) counts.add(line);
    expect(counts.render(page).text).toBe('Found 4 matching lines in 2 files.\na:b.ts:1\nb.ts:3');
  });

  it('always show at least one entry, however long', () => {
    const files = new FileMatches();
    files.add('x'.repeat(100));
    files.add('y');
    const r = files.render({ offset: 0, head: 10, maxChars: 10 });
    expect(r.text.split('\n')).toEqual(['Found 2 files.', 'x'.repeat(100), expect.stringMatching(/^\[Showing files 1-1 of 2\. 1 more: pass offset=1/)]);
  });
});
