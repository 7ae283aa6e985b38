import { useStdout } from 'ink';
import { useEffect } from 'react';

// Bracketed paste (xterm's mode 2004): the terminal wraps pasted text in ESC[200~ ... ESC[201~,
// so a paste's line breaks are told apart from Enter, even when it arrives in several chunks.
const ENABLE = '\u001B[?2004h';
const DISABLE = '\u001B[?2004l';

/** Ink hands a marker to useInput as its CSI sequence without the ESC. */
export function pasteMarker(input: string): 'start' | 'end' | undefined {
  return input === '[200~' ? 'start' : input === '[201~' ? 'end' : undefined;
}

/** Pasted text without control characters other than line breaks and tabs: they would garble the prompt. */
export function pastedText(input: string): string {
  let out = '';
  for (const ch of input) if (ch === '\t' || ch === '\n' || ch === '\r' || (ch >= ' ' && ch !== '\u007F')) out += ch;
  return out;
}

/**
 * Asks the terminal for bracketed paste while `active` (while the prompt has the keyboard: other
 * inputs, a review's reason, take pastes as they always did), and restores it after, on exit too.
 * Only on a terminal: a test's stdout records frames, not modes.
 */
export function useBracketedPaste(active: boolean): void {
  const { stdout } = useStdout();
  useEffect(() => {
    if (!active || stdout.isTTY !== true) return;
    stdout.write(ENABLE);
    // A crash or an exit that skips React's cleanup must not leave the shell pasting markers.
    const onExit = () => stdout.write(DISABLE);
    process.once('exit', onExit);
    return () => {
      process.removeListener('exit', onExit);
      stdout.write(DISABLE);
    };
  }, [active, stdout]);
}
