import { describe, expect, it } from 'vitest';
import { tooLongInGitWarnings, tooLongPrefix } from './long-paths.js';
import { escapedName } from './utf8-names.js';

const chain = (name: string, levels: number) => Array.from({ length: levels }, () => name).join('/');

describe('tooLongPrefix', () => {
  it('is undefined for a path within both limits', () => {
    expect(tooLongPrefix('a/b/c.txt')).toBeUndefined();
    expect(tooLongPrefix(chain('x', 256))).toBeUndefined();
    expect(tooLongPrefix(chain('y'.repeat(255), 12))).toBeUndefined();
  });

  it('gives the directory where the depth limit is crossed, with a trailing slash, however deep the path goes on', () => {
    expect(tooLongPrefix(`${chain('x', 2100)}/f`)).toBe(`${chain('x', 257)}/`);
    expect(tooLongPrefix(chain('x', 258))).toBe(`${chain('x', 257)}/`);
  });

  it('gives the path itself when its last name crosses a limit', () => {
    expect(tooLongPrefix(chain('x', 257))).toBe(chain('x', 257));
    const long = `${chain('d'.repeat(250), 12)}/${'f'.repeat(100)}`;
    expect(Buffer.byteLength(long)).toBe(3112);
    expect(tooLongPrefix(long)).toBe(long);
  });

  it('counts bytes, not characters: UTF-8 names, and names that are not UTF-8 as their own bytes', () => {
    // "é" is 2 bytes in UTF-8: 12 names of 125 are 3,011 bytes in 1,511 characters, 13 are 3,262.
    expect(tooLongPrefix(chain('é'.repeat(125), 12))).toBeUndefined();
    expect(tooLongPrefix(`${chain('é'.repeat(125), 13)}/f`)).toBe(`${chain('é'.repeat(125), 13)}/`);
    // A Latin-1 "é" is 1 byte: 12 names of 250 of them fit.
    const latin1 = escapedName(Buffer.from('\xe9'.repeat(250), 'latin1'));
    expect(tooLongPrefix(chain(latin1, 12))).toBeUndefined();
    expect(tooLongPrefix(`${chain(latin1, 13)}/f`)).toBe(`${chain(latin1, 13)}/`);
  });
});

describe('tooLongInGitWarnings', () => {
  it("reads git add's warnings about paths too long, cut short or not, and ignores other warnings", () => {
    const stderr = [
      // git cuts its messages at 4 KB: neither the closing quote nor the error are left.
      `warning: could not open directory '${chain('x', 2100)}/`.slice(0, 4095),
      `warning: unable to access '${chain('y', 2100)}`.slice(0, 4095),
      `warning: unable to access '${chain('z', 300)}/f': File name too long`,
      "warning: could not open directory 'private/': Permission denied",
      "warning: unable to access 'short': File name too long",
      'warning: in the working copy of a.txt, LF will be replaced by CRLF',
      '',
    ].join('\n');
    expect(tooLongInGitWarnings(stderr)).toEqual([`${chain('x', 257)}/`, `${chain('y', 257)}/`, `${chain('z', 257)}/`]);
  });
});
