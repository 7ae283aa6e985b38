import { describe, expect, it } from 'vitest';
import { applyEdit } from './edit-match.js';

describe('applyEdit', () => {
  it('replaces a unique exact match, even inside a line', () => {
    expect(applyEdit('f', 'let a = 1;\nlet b = 2;\n', 'b = 2', 'b = 3')).toEqual({ text: 'let a = 1;\nlet b = 3;\n', how: 'exact' });
  });

  it('matches lines ignoring surrounding whitespace and CRLF ends, keeping the line breaks', () => {
    const text = 'a\r\n    b  \r\n\tc\r\nd\r\n';
    // Re-indented to the first matched line's indentation, with the file's CRLF line ends.
    expect(applyEdit('f', text, 'b\nc\n', 'B\nC\n')).toEqual({ text: 'a\r\n    B\r\n    C\r\nd\r\n', how: 'whitespace' });
  });

  it('counts matches: exact duplicates, whitespace duplicates, none', () => {
    expect(() => applyEdit('f', 'x\nx\n', 'x', 'y')).toThrow('old_str matches 2 locations in f (exactly)');
    expect(() => applyEdit('f', ' x y\n\tx y\n', 'x  y', 'z')).toThrow('old_str not found in f');
    expect(() => applyEdit('f', ' x=1\n\tx=1\n', '  x=1  ', 'z')).toThrow(
      'old_str matches 2 locations in f (when leading and trailing whitespace is ignored)',
    );
  });
});
