import { describe, expect, it } from 'vitest';
import { applyEdit } from './edit-match.js';

describe('applyEdit', () => {
  it('replaces a unique exact match, even inside a line', () => {
    // spans: where the replacement landed in the new text.
    expect(applyEdit('f', 'let a = 1;\nlet b = 2;\n', 'b = 2', 'b = 3')).toEqual({ text: 'let a = 1;\nlet b = 3;\n', how: 'exact', spans: [{ start: 15, end: 20 }] });
  });

  it('matches lines ignoring surrounding whitespace and CRLF ends, keeping the line breaks', () => {
    const text = 'a\r\n    b  \r\n\tc\r\nd\r\n';
    // Re-indented to the first matched line's indentation, with the file's CRLF line ends.
    expect(applyEdit('f', text, 'b\nc\n', 'B\nC\n')).toEqual({ text: 'a\r\n    B\r\n    C\r\nd\r\n', how: 'whitespace', spans: [{ start: 3, end: 15 }] });
  });

  it('counts matches: exact duplicates, whitespace duplicates, none', () => {
    expect(() => applyEdit('f', 'x\nx\n', 'x', 'y')).toThrow(
      'old_str matches 2 places in f (exactly); it must match exactly one. Include more surrounding lines in old_str so ' +
        'that it identifies a single place, or pass replace_all: true to replace every one.',
    );
    expect(() => applyEdit('f', ' x y\n\tx y\n', 'x  y', 'z')).toThrow('old_str not found in f');
    expect(() => applyEdit('f', ' x=1\n\tx=1\n', '  x=1  ', 'z')).toThrow(
      'old_str matches 2 places in f (when leading and trailing whitespace is ignored)',
    );
  });

  it('replace_all replaces every exact match, not overlapping, in one pass', () => {
    expect(applyEdit('f', 'x = 1\ny = 2\nx = 1\n', 'x = 1', 'x = 10', true)).toEqual({
      text: 'x = 10\ny = 2\nx = 10\n',
      how: 'exact',
      spans: [
        { start: 0, end: 6 },
        { start: 13, end: 19 },
      ],
    });
    // The replacement contains old_str: replaced once per match, never again.
    expect(applyEdit('f', 'a a a', 'a', 'aa', true).text).toBe('aa aa aa');
    // Overlapping matches: "aaa" holds "aa" twice, overlapping; one is replaced.
    expect(applyEdit('f', 'aaa', 'aa', 'b', true).text).toBe('ba');
    // A unique match with replace_all is just that match.
    expect(applyEdit('f', 'one two', 'two', '2', true).text).toBe('one 2');
    expect(() => applyEdit('f', 'one', 'three', '3', true)).toThrow('old_str not found in f');
  });

  it('replace_all falls back to whitespace-tolerant line matches, each re-indented to its place', () => {
    const text = 'if a:\n    call()\nelse:\n        call()\n';
    expect(applyEdit('f', text, 'call()', 'run()', true).text).toBe('if a:\n    run()\nelse:\n        run()\n');
    expect(applyEdit('f', text, 'call()  \n', 'run()\nlog()\n', true).text).toBe('if a:\n    run()\n    log()\nelse:\n        run()\n        log()\n');
  });
});
