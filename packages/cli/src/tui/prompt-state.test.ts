import { describe, expect, it } from 'vitest';
import { continueLine, editPrompt, EMPTY_PROMPT, enterAction, type PromptEdit, type PromptState } from './prompt-state.js';

const apply = (s: PromptState, ...edits: PromptEdit[]) => edits.reduce(editPrompt, s);
const typed = (text: string) => apply(EMPTY_PROMPT, { type: 'insert', text });

describe('prompt editing', () => {
  it('inserts at the cursor, moves, and deletes backwards', () => {
    const s = apply(typed('helo'), { type: 'left' }, { type: 'insert', text: 'l' });
    expect(s).toMatchObject({ value: 'hello', cursor: 4 });
    expect(apply(s, { type: 'backspace' }, { type: 'backspace' })).toMatchObject({ value: 'heo', cursor: 2 });
    expect(apply(typed('x'), { type: 'left' }, { type: 'backspace' })).toMatchObject({ value: 'x', cursor: 0 });
  });

  it('normalises pasted line ends', () => {
    expect(typed('a\r\nb\rc').value).toBe('a\nb\nc');
  });

  it('turns a trailing backslash into a new line instead of sending', () => {
    const s = typed('first\\');
    expect(enterAction(s)).toBe('newline');
    expect(continueLine(s)).toMatchObject({ value: 'first\n', cursor: 6 });
    expect(enterAction(typed('done'))).toBe('submit');
  });

  it('moves between lines keeping the column, and home/end stay on the line', () => {
    const s = typed('abcdef\nxy\n12345');
    const up = apply(s, { type: 'up' });
    expect(up.cursor).toBe(9); // end of "xy": its column is shorter
    const up2 = apply(up, { type: 'up' });
    expect(up2.cursor).toBe(2);
    expect(apply(up2, { type: 'end' }).cursor).toBe(6);
    expect(apply(up2, { type: 'home' }).cursor).toBe(0);
    expect(apply(up2, { type: 'down' }, { type: 'down' }).cursor).toBe(12);
  });

  it('browses sent messages with up/down and restores the draft', () => {
    let s = apply(typed('one'), { type: 'sent' }, { type: 'insert', text: 'two' }, { type: 'sent' });
    expect(s).toMatchObject({ value: '', history: ['one', 'two'] });
    s = apply(s, { type: 'insert', text: 'draft' }, { type: 'up' });
    expect(s.value).toBe('two');
    s = apply(s, { type: 'up' }, { type: 'up' });
    expect(s.value).toBe('one');
    s = apply(s, { type: 'down' }, { type: 'down' });
    expect(s).toMatchObject({ value: 'draft', historyIndex: null });
  });

  it('does not record blank or repeated messages', () => {
    const s = apply(typed('same'), { type: 'sent' }, { type: 'insert', text: 'same' }, { type: 'sent' }, { type: 'insert', text: '  ' }, { type: 'sent' });
    expect(s.history).toEqual(['same']);
  });
});
