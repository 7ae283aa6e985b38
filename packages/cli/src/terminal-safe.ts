// Text we print must not drive the terminal: model text, command lines and output and file names
// may hold control sequences (an OSC 52 write to the clipboard, a window title, cursor moves, a
// hyperlink), and a hostile model or repository would write them. Every control character but
// newline and tab is shown as its \u escape instead. The escape is JSON's own, so a JSON line
// (stream-json) stays valid and means the same: JSON.stringify already escapes C0, and what is
// left (DEL and C1) only ever stands inside its strings.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `value` with every string in it (in plain objects and arrays, at any depth) made terminal-safe;
 * anything else is kept as it is. For what the TUI shows of the runtime's events.
 */
export function deepTerminalSafe<T>(value: T): T {
  if (typeof value === 'string') return terminalSafe(value) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v: unknown) => {
      const safe = deepTerminalSafe(v);
      changed ||= safe !== v;
      return safe;
    });
    return (changed ? out : value) as T;
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const safe = deepTerminalSafe(v);
      changed ||= safe !== v;
      out[k] = safe;
    }
    return (changed ? out : value) as T;
  }
  return value;
}
