import { describe, expect, it } from 'vitest';
import { markdownLines, type BlockCache } from './markdown-lines.js';
import { breakLine, expandTabs, wrapSegments, type Line } from './styled-text.js';

const plain = (lines: Line[]) => lines.map((l) => l.map((s) => s.text).join(''));

describe('styled text in terminal columns', () => {
  it('wraps between words, keeping a word in several styles whole and dropping the space where it wraps', () => {
    const lines = wrapSegments([{ text: 'see the ' }, { text: 'bold', style: { bold: true } }, { text: ', then more' }], 12);
    expect(plain(lines)).toEqual(['see the', 'bold, then', 'more']);
    expect(lines[1]?.[0]).toEqual({ text: 'bold', style: { bold: true } });
  });

  it("keeps the text's own line breaks and indentation, and cuts a word longer than the line", () => {
    expect(plain(wrapSegments([{ text: 'one\n  two\n' + 'x'.repeat(12) }], 5))).toEqual(['one', '  two', 'xxxxx', 'xxxxx', 'xx']);
  });

  it('never splits a wide character across lines', () => {
    expect(plain(breakLine([{ text: '漢字漢字' }], 5))).toEqual(['漢字', '漢字']);
    expect(plain(wrapSegments([{ text: 'ab 漢字漢字漢' }], 5))).toEqual(['ab', '漢字', '漢字', '漢']);
  });

  it('expands tabs to the next stop', () => {
    expect(expandTabs('a\tbc\td')).toBe('a   bc  d');
  });

  it('lays out a streaming reply the same with its block cache as without, keeping only the latest blocks', () => {
    const reply = '# Plan\n\nFirst **this**.\n\n```ts\nconst a = 1;\nconst b = 2;\n```\n\n- one\n- two\n';
    const cache: BlockCache = new Map();
    for (let end = 1; end <= reply.length; end++) {
      const text = reply.slice(0, end);
      expect(markdownLines(text, { width: 40, color: true }, cache)).toEqual(markdownLines(text, { width: 40, color: true }));
    }
    // The blocks of the whole reply, and nothing of its earlier, partial states.
    expect([...cache.keys()].filter((raw) => raw.trim() !== '')).toEqual(['# Plan', 'First **this**.', '```ts\nconst a = 1;\nconst b = 2;\n```', '- one\n- two\n']);
  });
});
