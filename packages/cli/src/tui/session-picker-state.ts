// The `-r` picker, pure: which session is selected, what a key does, what each row says.
import { shortId, truncate } from './format.js';

export interface PickerSession {
  id: string;
  title: string;
  /** Last activity, epoch ms. */
  updatedAt: number;
  /** Another live process runs it: it can't be opened here now. */
  inUse?: boolean;
}

export interface PickerState {
  sessions: readonly PickerSession[];
  selected: number;
  /** Said under the list (why the selected session can't be opened). */
  message?: string;
  /** The user's answer: a session to open, or none (Esc). */
  done?: { kind: 'open'; id: string } | { kind: 'quit' };
}

export type PickerKey = 'up' | 'down' | 'home' | 'end' | 'page-up' | 'page-down' | 'enter' | 'escape';

/** Rows moved by Page Up and Page Down. */
export const PAGE = 10;

/** Newest first, as the registry lists them. */
export function pickerState(sessions: readonly PickerSession[]): PickerState {
  return { sessions, selected: 0 };
}

export function pickerKey(s: PickerState, key: PickerKey): PickerState {
  if (s.done) return s;
  const last = s.sessions.length - 1;
  const move = (to: number): PickerState => ({ sessions: s.sessions, selected: Math.max(0, Math.min(last, to)) });
  switch (key) {
    case 'up':
      return move(s.selected - 1);
    case 'down':
      return move(s.selected + 1);
    case 'home':
      return move(0);
    case 'end':
      return move(last);
    case 'page-up':
      return move(s.selected - PAGE);
    case 'page-down':
      return move(s.selected + PAGE);
    case 'escape':
      return { ...s, done: { kind: 'quit' } };
    case 'enter': {
      const chosen = s.sessions[s.selected];
      if (!chosen) return { ...s, done: { kind: 'quit' } };
      if (chosen.inUse) return { ...s, message: `Session ${shortId(chosen.id)} is in use by another Infinity Code process: pick another, or Esc.` };
      return { ...s, done: { kind: 'open', id: chosen.id } };
    }
  }
}

/** "just now", "5 min ago", "3 h ago", "2 days ago", then the date. */
export function ageText(ms: number, at: number): string {
  const min = Math.floor(ms / 60_000);
  if (min < 1) return 'just now';
  if (min < 60) return `${min} min ago`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ago`;
  const days = Math.floor(h / 24);
  if (days < 7) return days === 1 ? 'yesterday' : `${days} days ago`;
  return new Date(at).toISOString().slice(0, 10);
}

export interface PickerRow {
  id: string;
  selected: boolean;
  /** "th_abc12  3 min ago  Fix the parser" */
  text: string;
  inUse: boolean;
}

/**
 * The rows on screen: at most `height`, the selected one always among them, each cut to
 * `width` columns. `above`/`below`: how many sessions are off the window.
 */
export function pickerRows(s: PickerState, now: number, height: number, width: number): { rows: PickerRow[]; above: number; below: number } {
  const n = s.sessions.length;
  const size = Math.max(1, Math.min(height, n));
  const start = Math.max(0, Math.min(s.selected - Math.floor(size / 2), n - size));
  const ages = s.sessions.map((x) => ageText(now - x.updatedAt, x.updatedAt));
  const ageWidth = Math.max(...ages.slice(start, start + size).map((a) => a.length));
  const rows = s.sessions.slice(start, start + size).map((x, i) => {
    const line = `${shortId(x.id)}  ${ages[start + i].padEnd(ageWidth)}  ${x.title}${x.inUse ? '  (in use elsewhere)' : ''}`;
    return { id: x.id, selected: start + i === s.selected, text: truncate(line, Math.max(10, width - 2)), inUse: x.inUse === true };
  });
  return { rows, above: start, below: n - start - size };
}
