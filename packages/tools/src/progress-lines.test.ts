import { describe, expect, it } from 'vitest';
import { ProgressLines } from './progress-lines.js';

describe('ProgressLines (live tail of command output)', () => {
  it('gives out lines once they end, across chunk boundaries', () => {
    const p = new ProgressLines();
    expect(p.push('compiling a')).toEqual([]);
    expect(p.push('.ts\ncompiling b.ts\ndon')).toEqual(['compiling a.ts', 'compiling b.ts']);
    expect(p.flush()).toEqual(['don']);
    expect(p.flush()).toEqual([]);
  });

  it('removes colours and keeps the last state of a redrawn progress bar', () => {
    const p = new ProgressLines();
    expect(p.push('\x1b[32mPASS\x1b[0m a.test.ts\n[##  ] 50%\r[####] 100%\n')).toEqual(['PASS a.test.ts', '[####] 100%']);
  });

  it('shows control characters harmlessly and summarises binary noise', () => {
    const p = new ProgressLines();
    expect(p.push('bell\x07here\n\x00\x01\x02\x03binary\n')).toEqual(['bell\ufffdhere', '(binary output)']);
  });

  it('keeps only the end of a large burst and cuts long lines', () => {
    const p = new ProgressLines();
    const burst = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const lines = p.push(burst);
    expect(lines).toHaveLength(20);
    expect(lines.at(-1)).toBe('line 999');
    const [long] = p.push(`${'x'.repeat(5000)}\n`);
    expect(long.length).toBe(300);
    expect(long.endsWith('…')).toBe(true);
  });
});
