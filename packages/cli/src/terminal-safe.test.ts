import { describe, expect, it } from 'vitest';
import { terminalSafe } from './terminal-safe.js';

describe('terminalSafe', () => {
  it('shows control sequences as text: OSC 52 (clipboard), OSC 0 (title), OSC 8 (link), CSI, C1, DEL, a lone CR', () => {
    const osc52 = '\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007';
    const out = terminalSafe(`ok ${osc52} \u001b]0;pwned\u0007 \u001b[2J \u009b31m \u007f a\rb \u001b]8;;http://x\u001b\\\\link`);
    // eslint-disable-next-line no-control-regex -- what must not be left
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(out).toContain('\\u001b]52;c;');
    expect(out).toContain('\\u009b31m');
    expect(out).toContain('a\\u000db');
  });

  it('keeps newlines, tabs and all printable text, emoji included', () => {
    const text = 'line one\n\tindented ✓ 🎉 ünïcode\n';
    expect(terminalSafe(text)).toBe(text);
  });

  it('keeps a JSON line valid and its data the same', () => {
    const data = { text: 'a\u009b31m\u007fb\u001b[0m' };
    const line = terminalSafe(JSON.stringify(data));
    // eslint-disable-next-line no-control-regex -- what must not be left
    expect(line).not.toMatch(/[\u007f-\u009f\u001b]/);
    expect(JSON.parse(line)).toEqual(data);
  });
});
