import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.js';

describe('durations (--timeout)', () => {
  it.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1.5h', 5_400_000],
    ['120', 120_000],
    [' 2M ', 120_000],
    ['0.5', 500],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '0', '0s', '-5m', '5 minutes', '1d', 'm', '1e3', '5m30s'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('formats whole units as written', () => {
    expect([formatDuration(90_000), formatDuration(300_000), formatDuration(3_600_000), formatDuration(500)]).toEqual(['90s', '5m', '1h', '0.5s']);
  });
});
