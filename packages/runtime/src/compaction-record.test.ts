import { describe, expect, it } from 'vitest';
import { bounded, MESSAGE_MAX_CHARS, MESSAGES_MAX_CHARS, userTextOf } from './compaction-record.js';
import { frameRecord, frameSummary, readSummary, STOP_PHRASES } from './wording.js';

describe("the user's messages a summary keeps", () => {
  it('are the user turns of text only: not tool results, nor what the runtime asked itself', () => {
    expect(userTextOf({ role: 'user', content: [{ type: 'text', text: 'fix the parser' }] })).toBe('fix the parser');
    expect(userTextOf({ role: 'assistant', content: [{ type: 'text', text: 'fixed' }] })).toBeUndefined();
    expect(userTextOf({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'ok' }] }] })).toBeUndefined();
    expect(userTextOf({ role: 'user', content: [{ type: 'text', text: STOP_PHRASES.contextFull }] })).toBeUndefined();
    expect(userTextOf({ role: 'user', content: [{ type: 'text', text: STOP_PHRASES.replyCut }] })).toBeUndefined();
  });

  it('are all kept when they fit', () => {
    expect(bounded(['one', 'two', 'three'])).toEqual({ first: ['one', 'two', 'three'], leftOut: 0, latest: [] });
  });

  it('beyond the bound, are the first and the latest whole, and say how many were left out', () => {
    const texts = Array.from({ length: 20 }, (_, i) => `${i}:${'m'.repeat(4_000)}`);
    const b = bounded(texts);
    expect(b.first).toEqual([texts[0]]);
    expect(b.latest).toEqual(texts.slice(-b.latest.length));
    expect(b.latest.length).toBeGreaterThan(1);
    expect(b.latest.reduce((n, t) => n + t.length, 0)).toBeLessThanOrEqual(MESSAGES_MAX_CHARS);
    expect(1 + b.leftOut + b.latest.length).toBe(20);
    const framed = frameRecord({ ...b });
    expect(framed).toContain(`[${b.leftOut} more messages of the user were here, left out for length]`);
    expect(framed.indexOf(texts[0])).toBeLessThan(framed.indexOf('left out for length'));
    expect(framed.indexOf('left out for length')).toBeLessThan(framed.indexOf(texts[19]));
  });

  it('keep the start and the end of one too long message, and the latest message always', () => {
    const huge = `START ${'x'.repeat(50_000)} END`;
    const b = bounded(['the task', ...Array.from({ length: 5 }, () => 'y'.repeat(9_000)), huge]);
    expect(b.first).toEqual(['the task']);
    expect(b.leftOut).toBeGreaterThan(0);
    const last = b.latest.at(-1)!;
    expect(last.startsWith('START ')).toBe(true);
    expect(last.endsWith(' END')).toBe(true);
    expect(last.length).toBeLessThan(MESSAGE_MAX_CHARS + 100);
    expect(last).toMatch(/\[\.\.\. \d+ characters left out \.\.\.\]/);
  });

  it('are read back as no part of the summary', () => {
    const record = frameRecord({ task: 'Fix the parser', first: ['hello'], leftOut: 0, latest: [] });
    const text = frameSummary('## Goal\nA parser.', ['root'], record);
    expect(text).toContain('<user_message>\nhello\n</user_message>');
    expect(text).toContain('<task>\nFix the parser\n</task>');
    expect(text.endsWith('Thread stack: ["root"]')).toBe(true);
    expect(readSummary(text)).toBe('## Goal\nA parser.');
    expect(frameRecord({ first: [], leftOut: 0, latest: [] })).toBe('');
  });
});
