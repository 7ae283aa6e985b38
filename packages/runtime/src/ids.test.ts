import { describe, expect, it } from 'vitest';
import { derivedId, derivedThreadId, newThreadId } from './ids.js';

describe('thread ids', () => {
  it('are 13 lowercase base-36 digits after the prefix, well under a UUID in length', () => {
    const ids = [newThreadId(), derivedThreadId('th_', 'root', 'toolu_1'), derivedThreadId('ev_', 'root', 'input-1')];
    for (const id of ids) expect(id).toMatch(/^(th|ev)_[0-9a-z]{13}$/);
    expect(ids[0].length).toBeLessThan(crypto.randomUUID().length / 2);
  });

  it('derived ones are the same for the same parts (a replay after a crash finds its child) and differ otherwise', () => {
    expect(derivedThreadId('th_', 'root', 'toolu_1')).toBe(derivedThreadId('th_', 'root', 'toolu_1'));
    expect(derivedThreadId('th_', 'root', 'toolu_1')).not.toBe(derivedThreadId('th_', 'root', 'toolu_2'));
    // Parts are separated: ('ab','c') is not ('a','bc').
    expect(derivedThreadId('th_', 'ab', 'c')).not.toBe(derivedThreadId('th_', 'a', 'bc'));
  });

  it('new ones do not repeat, and keep all 13 digits when the leading bits are zero', () => {
    const seen = new Set(Array.from({ length: 2000 }, () => newThreadId()));
    expect(seen.size).toBe(2000);
    // About a quarter of 64-bit values have fewer than 13 base-36 digits: padded, never shorter.
    for (let i = 0; i < 4000; i++) expect(derivedThreadId('th_', String(i))).toHaveLength(16);
  });

  it('leave tool-use ids as they were (the API takes [A-Za-z0-9_-], the queue dedups by them)', () => {
    expect(derivedId('toolu_sp_', 'x')).toMatch(/^toolu_sp_[A-Za-z0-9_-]{22}$/);
  });
});
