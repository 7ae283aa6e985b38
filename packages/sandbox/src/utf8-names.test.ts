// Names that are not UTF-8, kept exact in strings: the escaping must give back every byte, never
// mistake a name that is UTF-8 (astral characters included) for one that is not, and show the
// odd bytes the way git does.
import { describe, expect, it } from 'vitest';
import { escapedName, hasOddBytes, nameBytes, nulList, nulNames, shownName } from './utf8-names.js';

const bytes = (...b: number[]) => Buffer.from(b);

describe('names that are not UTF-8', () => {
  it('leaves UTF-8 names as they decode, astral characters (surrogate pairs) included', () => {
    for (const name of ['plain.txt', 'café.txt', '💀 skull', 'a\\b', '\uFFFD literal', '日本語/ファイル']) {
      const b = Buffer.from(name, 'utf8');
      expect(escapedName(b)).toBe(name);
      expect(hasOddBytes(name)).toBe(false);
      expect(nameBytes(name)).toEqual(b);
      expect(shownName(name)).toBe(name);
    }
  });

  it.each([
    ['Latin-1', bytes(0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74), 'caf\\351.t'],
    ['a truncated sequence', bytes(0x61, 0xe2, 0x82), 'a\\342\\202'],
    ['an overlong encoding', bytes(0xc0, 0xaf), '\\300\\257'],
    ['an encoded surrogate', bytes(0xed, 0xa0, 0x80), '\\355\\240\\200'],
    ['a lead byte past U+10FFFF', bytes(0xf5, 0x80, 0x80, 0x80), '\\365\\200\\200\\200'],
    ['odd bytes beside UTF-8 and a backslash', Buffer.concat([Buffer.from('é\\'), bytes(0xff), Buffer.from('💀')]), 'é\\\\\\377💀'],
  ])('keeps %s exact, and shows it with octal escapes', (_, b, shown) => {
    const name = escapedName(b);
    expect(hasOddBytes(name)).toBe(true);
    expect(nameBytes(name)).toEqual(b);
    expect(shownName(name)).toBe(shown);
  });

  it('reads and writes NUL-separated lists of such names', () => {
    const odd = escapedName(bytes(0x64, 0xe9));
    const list = nulList(['a', `${odd}/f`, 'é']);
    expect(list).toEqual(Buffer.concat([Buffer.from('a\0'), bytes(0x64, 0xe9), Buffer.from('/f\0é\0')]));
    expect(nulNames(list)).toEqual(['a', `${odd}/f`, 'é']);
    expect(nulNames(Buffer.from('x\0y'))).toEqual(['x', 'y']);
  });
});
