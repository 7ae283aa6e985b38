// The prompt's editing model, pure: a multi-line value, a cursor, and the sent-message history.

export interface PromptState {
  value: string;
  /** Index into `value`. */
  cursor: number;
  /** Sent messages, oldest first. */
  history: string[];
  /** Which history entry is shown (null: the draft being typed). */
  historyIndex: number | null;
  /** What was typed before browsing history, restored when browsing past the newest entry. */
  draft: string;
}

export type PromptEdit =
  | { type: 'insert'; text: string }
  | { type: 'backspace' }
  | { type: 'left' }
  | { type: 'right' }
  | { type: 'up' }
  | { type: 'down' }
  | { type: 'home' }
  | { type: 'end' }
  /** Replace the whole value (Tab completion), the cursor at `cursor` or else the end. */
  | { type: 'set'; value: string; cursor?: number }
  /** The value was sent: remember it and start empty. */
  | { type: 'sent' }
  | { type: 'clear' };

export const EMPTY_PROMPT: PromptState = { value: '', cursor: 0, history: [], historyIndex: null, draft: '' };

const HISTORY_LIMIT = 200;

export function editPrompt(s: PromptState, e: PromptEdit): PromptState {
  switch (e.type) {
    case 'insert': {
      // Pastes arrive with \r line ends from the terminal.
      const text = e.text.replace(/\r\n?/g, '\n');
      return { ...s, value: s.value.slice(0, s.cursor) + text + s.value.slice(s.cursor), cursor: s.cursor + text.length };
    }
    case 'backspace':
      if (s.cursor === 0) return s;
      return { ...s, value: s.value.slice(0, s.cursor - 1) + s.value.slice(s.cursor), cursor: s.cursor - 1 };
    case 'left':
      return { ...s, cursor: Math.max(0, s.cursor - 1) };
    case 'right':
      return { ...s, cursor: Math.min(s.value.length, s.cursor + 1) };
    case 'home':
      return { ...s, cursor: lineStart(s.value, s.cursor) };
    case 'end': {
      const end = s.value.indexOf('\n', s.cursor);
      return { ...s, cursor: end === -1 ? s.value.length : end };
    }
    case 'up':
      return lineStart(s.value, s.cursor) === 0 ? browse(s, -1) : moveLine(s, -1);
    case 'down':
      return s.value.indexOf('\n', s.cursor) === -1 ? browse(s, 1) : moveLine(s, 1);
    case 'set':
      return { ...s, value: e.value, cursor: Math.min(e.value.length, Math.max(0, e.cursor ?? e.value.length)) };
    case 'sent': {
      const last = s.history[s.history.length - 1];
      const history = s.value.trim() === '' || last === s.value ? s.history : [...s.history, s.value].slice(-HISTORY_LIMIT);
      return { value: '', cursor: 0, history, historyIndex: null, draft: '' };
    }
    case 'clear':
      return { ...s, value: '', cursor: 0, historyIndex: null, draft: '' };
  }
}

/** Enter: send the value, unless it ends in a backslash, which asks for a new line instead. */
export function enterAction(s: PromptState): 'submit' | 'newline' {
  return s.value.slice(0, s.cursor).endsWith('\\') ? 'newline' : 'submit';
}

/** Replaces the backslash before the cursor with a line break. */
export function continueLine(s: PromptState): PromptState {
  const before = s.value.slice(0, s.cursor - 1);
  return { ...s, value: `${before}\n${s.value.slice(s.cursor)}`, cursor: before.length + 1 };
}

function lineStart(value: string, cursor: number): number {
  return value.lastIndexOf('\n', cursor - 1) + 1;
}

/** Up or down one line, keeping the column where the line is long enough. */
function moveLine(s: PromptState, dir: -1 | 1): PromptState {
  const start = lineStart(s.value, s.cursor);
  const column = s.cursor - start;
  const targetStart = dir < 0 ? lineStart(s.value, start - 1) : s.value.indexOf('\n', s.cursor) + 1;
  const targetEnd = s.value.indexOf('\n', targetStart);
  const length = (targetEnd === -1 ? s.value.length : targetEnd) - targetStart;
  return { ...s, cursor: targetStart + Math.min(column, length) };
}

function browse(s: PromptState, dir: -1 | 1): PromptState {
  if (s.history.length === 0) return s;
  const current = s.historyIndex ?? s.history.length;
  const index = Math.min(s.history.length, Math.max(0, current + dir));
  if (index === current) return s;
  const draft = s.historyIndex === null ? s.value : s.draft;
  if (index === s.history.length) return { ...s, value: draft, cursor: draft.length, historyIndex: null, draft: '' };
  const value = s.history[index];
  return { ...s, value, cursor: value.length, historyIndex: index, draft };
}
