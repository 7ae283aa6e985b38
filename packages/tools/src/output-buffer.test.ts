import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_LIMITS } from './options.js';
import { OutputBuffer } from './output-buffer.js';

const small = { ...DEFAULT_OUTPUT_LIMITS, headLines: 3, tailLines: 2, maxLineChars: 10 };

describe('OutputBuffer', () => {
  it('hands out whole lines in batches, interleaving streams by line', () => {
    const b = new OutputBuffer(DEFAULT_OUTPUT_LIMITS);
    b.write('stdout', 'one\ntw');
    b.write('stderr', 'err line\n');
    expect(b.take()).toBe('one\nerr line');
    b.write('stdout', 'o\n');
    expect(b.take()).toBe('two');
    expect(b.take()).toBe('');
  });

  it('keeps the head and a rolling tail, counting the lines dropped between them', () => {
    const b = new OutputBuffer(small);
    b.write('stdout', Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join('\n') + '\n');
    expect(b.take({ announceLimit: true })).toBe(
      'l1\nl2\nl3\n[output limit reached: further output is not streamed; the final event will show the last lines]',
    );
    expect(b.take({ announceLimit: true })).toBe('');
    expect(b.rest()).toBe('[... 5 lines of output omitted ...]\nl9\nl10');
    expect(b.lines).toBe(10);
  });

  it('bounds a line that never ends, and keeps only the last state of a redrawn line', () => {
    const b = new OutputBuffer(small);
    for (let i = 0; i < 100; i++) b.write('stdout', 'x'.repeat(10));
    b.flushPartials();
    expect(b.take()).toBe(`${'x'.repeat(10)}… [990 more characters]`);
    b.write('stdout', Array.from({ length: 30 }, (_, i) => `${i}%`).join('\r'));
    b.write('stdout', '\n');
    expect(b.take()).toBe('29%');
  });

  it('strips colours and terminal titles', () => {
    const b = new OutputBuffer(DEFAULT_OUTPUT_LIMITS);
    b.write('stdout', '\x1b[1;32mPASS\x1b[0m test\n\x1b]0;title\x07\x1b[2Kdone\n');
    expect(b.take()).toBe('PASS test\ndone');
  });
});
