import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_LIMITS } from './options.js';
import { clipOutput, OutputBuffer } from './output-buffer.js';

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

  it('keeps a run of binary lines as one line saying how much, and shows control characters as U+FFFD', () => {
    const b = new OutputBuffer(DEFAULT_OUTPUT_LIMITS);
    b.write('stdout', 'before\n');
    b.write('stdout', '\x7fELF\x02\x01\x01\0\0\0\0\0\n\0\0\x03\0>\0\x01\0\0\0\ufffd\ufffd\x04\0\0\0\n');
    b.write('stdout', 'bell\x07 and back\bspace\nafter\n');
    expect(b.take()).toBe('before\n[binary output: 28 characters on 2 lines, not shown]\nbell\ufffd and back\ufffdspace\nafter');
    expect(b.lines).toBe(5);
  });

  it('ends a binary run at a batch, and leaves text with a few bad bytes as text', () => {
    const b = new OutputBuffer(DEFAULT_OUTPUT_LIMITS);
    b.write('stdout', `${'\ufffd'.repeat(20)}\n`);
    expect(b.take()).toBe('[binary output: 20 characters on 1 line, not shown]');
    b.write('stdout', 'caf\ufffd au lait, bad-\ufffd\ufffd-name.txt\n');
    expect(b.rest()).toBe('caf\ufffd au lait, bad-\ufffd\ufffd-name.txt');
  });
});

describe('clipOutput', () => {
  it('keeps a short text as it is and cuts a long one to its head and tail, saying how much is left out', () => {
    expect(clipOutput('one\ntwo\n')).toBe('one\ntwo');
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const clipped = clipOutput(lines, { headLines: 3, tailLines: 2 });
    expect(clipped).toBe('line 0\nline 1\nline 2\n[... 95 lines of output omitted ...]\nline 98\nline 99');
    expect(clipOutput('x'.repeat(50), { maxLineChars: 10 })).toBe(`${'x'.repeat(10)}… [40 more characters]`);
  });
});
