import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { execLine, shellWord } from './shell-word.js';

const WORDS = ['plain', 'a/b.c-d_e', '', 'two words', "it's", '$HOME', '`id`', 'a;b', '*', '-n', 'x=1', 'tab\there', 'new\nline', '\\', '"q"', '~'];

describe('shell words', () => {
  it('reach the program exactly as they were, whatever they hold', () => {
    for (const w of WORDS) {
      expect(execFileSync('/bin/sh', ['-c', `printf %s ${shellWord(w)}`], { encoding: 'utf8' }), JSON.stringify(w)).toBe(w);
    }
    // An argv as one line: every argument reaches the program separate and exact.
    const out = execFileSync('/bin/sh', ['-c', execLine(['/bin/sh', '-c', 'printf "[%s]" "$@"', 'sh', ...WORDS])], { encoding: 'utf8' });
    expect(out).toBe(WORDS.map((w) => `[${w}]`).join(''));
  });

  it('are left bare only when nothing in them is special', () => {
    expect(shellWord('src/a.ts')).toBe('src/a.ts');
    expect(shellWord('a b')).toBe("'a b'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
  });
});
