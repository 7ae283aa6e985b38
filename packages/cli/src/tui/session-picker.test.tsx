// `-r` alone: the project's sessions to pick from, newest first.
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { act } from 'react';
import { describe, expect, it } from 'vitest';
import { SessionPicker } from './session-picker.js';
import { ageText, pickerKey, pickerRows, pickerState, type PickerSession, type PickerState } from './session-picker-state.js';

const NOW = Date.parse('2026-12-10T12:00:00Z');
const sessions: PickerSession[] = [
  { id: 'th_aaaaaaaaaaaaa', title: 'Fix the login bug', updatedAt: NOW - 5 * 60_000 },
  { id: 'th_bbbbbbbbbbbbb', title: 'Add dark mode', updatedAt: NOW - 3 * 3_600_000, inUse: true },
  { id: 'th_ccccccccccccc', title: 'interactive session', updatedAt: NOW - 9 * 86_400_000 },
];

describe('the session picker, pure', () => {
  it('moves within the list, opens the selected session, and leaves on Esc', () => {
    let s = pickerState(sessions);
    s = pickerKey(s, 'up');
    expect(s.selected).toBe(0);
    s = pickerKey(pickerKey(s, 'down'), 'down');
    expect(s.selected).toBe(2);
    s = pickerKey(s, 'down');
    expect(s.selected).toBe(2);
    expect(pickerKey(s, 'enter').done).toEqual({ kind: 'open', id: 'th_ccccccccccccc' });
    expect(pickerKey(pickerKey(s, 'home'), 'enter').done).toEqual({ kind: 'open', id: 'th_aaaaaaaaaaaaa' });
    expect(pickerKey(s, 'escape').done).toEqual({ kind: 'quit' });
  });

  it('will not open a session another process runs, and says why', () => {
    const s = pickerKey(pickerKey(pickerState(sessions), 'down'), 'enter');
    expect(s.done).toBeUndefined();
    expect(s.message).toBe('Session th_bbbbb is in use by another Infinity Code process: pick another, or Esc.');
  });

  it('rows: id prefix, age and title, the selection kept in a window of the list', () => {
    const many: PickerSession[] = Array.from({ length: 30 }, (_, i) => ({ id: `th_${String(i).padStart(13, '0')}`, title: `task ${i}`, updatedAt: NOW - i * 60_000 }));
    let s: PickerState = pickerState(many);
    for (let i = 0; i < 20; i++) s = pickerKey(s, 'down');
    const { rows, above, below } = pickerRows(s, NOW, 5, 80);
    expect(rows.map((r) => r.text)).toEqual([
      'th_00000  18 min ago  task 18',
      'th_00000  19 min ago  task 19',
      'th_00000  20 min ago  task 20',
      'th_00000  21 min ago  task 21',
      'th_00000  22 min ago  task 22',
    ]);
    expect(rows.find((r) => r.selected)?.text).toContain('task 20');
    expect([above, below]).toEqual([18, 7]);
    expect(ageText(30_000, NOW)).toBe('just now');
    expect(ageText(26 * 3_600_000, NOW)).toBe('yesterday');
    expect(ageText(9 * 86_400_000, NOW - 9 * 86_400_000)).toBe('2026-12-01');
  });
});

describe('the session picker on screen', () => {
  it('lists the sessions, arrows move, Enter opens; Esc leaves with nothing chosen', async () => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    const done: unknown[] = [];
    let ui!: ReturnType<typeof render>;
    await act(async () => {
      ui = render(<SessionPicker sessions={sessions} now={NOW} height={10} isActive onDone={(d) => done.push(d)} />);
    });
    const frame = () => stripVTControlCharacters(ui.lastFrame() ?? '');
    expect(frame()).toContain('Resume a session (3): ↑/↓ choose · Enter opens · Esc leaves');
    expect(frame()).toContain(
      [
        '› th_aaaaa  5 min ago   Fix the login bug',
        '  th_bbbbb  3 h ago     Add dark mode  (in use elsewhere)',
        '  th_ccccc  2026-12-01  interactive session',
      ].join('\n'),
    );
    await act(async () => void ui.stdin.write('\u001b[B'));
    await act(async () => void ui.stdin.write('\u001b[B'));
    await act(async () => void ui.stdin.write('\r'));
    expect(done).toEqual([{ kind: 'open', id: 'th_ccccccccccccc' }]);
    expect(frame()).toBe('Resuming interactive session…');
    ui.unmount();

    const left: unknown[] = [];
    await act(async () => {
      ui = render(<SessionPicker sessions={sessions} now={NOW} height={10} isActive onDone={(d) => left.push(d)} />);
    });
    await act(async () => void ui.stdin.write('\u001b'));
    expect(left).toEqual([{ kind: 'quit' }]);
    ui.unmount();
  });
});
