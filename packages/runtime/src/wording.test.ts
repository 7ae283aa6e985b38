import { describe, expect, it } from 'vitest';
import { DEFAULT_PHRASES, wordingWith, type Phrases, type ReportFrame } from './wording.js';

/** Every phrase changed: the readers must follow the phrases, not any one wording. */
const REWORDED: Phrases = {
  childReport: 'CHILD SAYS >> ',
  childClosedWithReport: '<{child}> signed off, saying: ',
  childClosed: '<{child}> signed off',
  eventReport: 'EVENT HELPER SAYS >> ',
  eventClosedWithReport: 'helper {child} of {subscription} signed off, saying: ',
  parentMessage: 'PARENT SAYS >> ',
  summary: '== recap ==\n',
  interruptedByUser: 'stopped by the human',
  wokenByInput: 'woke up',
  interruptedByRestart: 'lost in a restart',
  spawned: 'child {child} is off',
};

const frames: Array<[string, ReportFrame, string]> = [
  ['a report', { from: 'child', closed: false, childThreadId: 'th_a' }, 'halfway there'],
  ['a closing report', { from: 'child', closed: true, childThreadId: 'th_a' }, 'Parser fixed.\n\nAll tests pass.'],
  ['a silent closing', { from: 'child', closed: true, childThreadId: 'th_a' }, ''],
  ["an event thread's report", { from: 'event', closed: false, childThreadId: 'ev_b', subscriptionId: 'toolu_1' }, 'the build broke'],
  ["an event thread's closing report", { from: 'event', closed: true, childThreadId: 'ev_b', subscriptionId: 'toolu_1' }, 'handled it'],
];

describe.each([
  ['the default phrases', DEFAULT_PHRASES],
  ['reworded phrases', REWORDED],
])('the wording with %s reads back what it frames', (_name, phrases) => {
  const w = wordingWith(phrases);

  it.each(frames)('%s', (_what, frame, report) => {
    const framed = w.frameReport(frame, report);
    expect(framed).not.toBe(report);
    const read = w.readReport(framed);
    expect(read).toMatchObject({ text: report, closed: frame.closed, from: frame.from });
    // The closings name the child; a plain report doesn't.
    if (frame.closed) expect(read!.childThreadId).toBe(frame.childThreadId);
    // The reviewer's note follows the report: read back, it stays with the report's text (only a
    // silent closing can tell it apart).
    const noted = w.readReport(w.frameReport(frame, report, 'The user accepted it.'));
    if (report === '') expect(noted).toMatchObject({ text: '', note: 'The user accepted it.' });
    else expect(noted!.text).toBe(`${report}\n\nThe user accepted it.`);
  });

  it('tells reports, parent messages and summaries from anything else', () => {
    expect(w.readReport('plain output of a command')).toBeUndefined();
    expect(w.readParentMessage(w.frameParentMessage('use tabs'))).toBe('use tabs');
    expect(w.readParentMessage('use tabs')).toBeUndefined();
    expect(w.readSummary(w.frameSummary('We fixed the parser.\n\nNext: docs.', ['root', 'th_a']))).toBe('We fixed the parser.\n\nNext: docs.');
    expect(w.readSummary('We fixed the parser.')).toBeUndefined();
    expect(w.readSpawned(w.frameSpawned('th_abc'))).toBe('th_abc');
    expect(w.readSpawned(`${w.frameSpawned('th_abc')} and more`)).toBeUndefined();
    expect(w.readSpawned('plain output of a command')).toBeUndefined();
  });
});
