import { PassThrough } from 'node:stream';
import { render, Text } from 'ink';
import { act } from 'react';
import { describe, expect, it } from 'vitest';
import { pastedText, pasteMarker, useBracketedPaste } from './bracketed-paste.js';

const ESC = '\u001B';

function Probe({ active }: { active: boolean }) {
  useBracketedPaste(active);
  return <Text>prompt</Text>;
}

/** A terminal's stdout: everything written to it, mode switches included. */
function terminal() {
  const out = Object.assign(new PassThrough(), { isTTY: true, columns: 80, rows: 24 });
  let written = '';
  out.on('data', (d: Buffer) => (written += d.toString()));
  const modes = () => [...written.matchAll(new RegExp(`${ESC}\\[\\?2004([hl])`, 'g'))].map((m) => (m[1] === 'h' ? 'on' : 'off'));
  return { stdout: out as unknown as NodeJS.WriteStream, modes };
}

describe('bracketed paste', () => {
  it('is on while the prompt has the keyboard, off when it loses it and when the UI ends', async () => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    const t = terminal();
    let ui!: ReturnType<typeof render>;
    await act(async () => {
      ui = render(<Probe active />, { stdout: t.stdout, patchConsole: false });
    });
    expect(t.modes()).toEqual(['on']);
    await act(async () => ui.rerender(<Probe active={false} />));
    expect(t.modes()).toEqual(['on', 'off']);
    await act(async () => ui.rerender(<Probe active />));
    await act(async () => ui.unmount());
    expect(t.modes()).toEqual(['on', 'off', 'on', 'off']);
    // Nothing left for an exit to undo.
    expect(process.listeners('exit').some((l) => l.name === 'onExit')).toBe(false);
  });

  it('reads the markers Ink passes on, and drops control characters from pasted text', () => {
    expect(pasteMarker('[200~')).toBe('start');
    expect(pasteMarker('[201~')).toBe('end');
    expect(pasteMarker('[200~x')).toBeUndefined();
    expect(pastedText('a\tb\r\nc\u0007\u001B\u007Fd')).toBe('a\tb\r\ncd');
  });
});
