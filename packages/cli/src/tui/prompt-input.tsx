import { Box, Text, useInput } from 'ink';
import { useRef, useState } from 'react';
import { pastedText, pasteMarker, useBracketedPaste } from './bracketed-paste.js';
import { continueLine, editPrompt, EMPTY_PROMPT, enterAction, type PromptEdit, type PromptState } from './prompt-state.js';
import { useLatestState } from './use-latest-state.js';

export interface PromptInputProps {
  onSubmit: (text: string) => void;
  /**
   * Tab: what the value becomes, where the cursor goes (the end by default), and the candidates
   * to list under the prompt (as shown) when several match.
   */
  complete: (value: string, cursor: number) => { value: string; cursor?: number; candidates: string[] };
  /** Only one input handler may own the keyboard (a diff review takes it). */
  isActive: boolean;
  placeholder?: string;
}

/**
 * Multi-line input: Enter sends; Shift/Alt+Enter, Ctrl+J or a trailing backslash add a line. A
 * paste is text, line breaks included, however the terminal delivers it: it never sends.
 */
export function PromptInput({ onSubmit, complete, isActive, placeholder }: PromptInputProps) {
  const [get, update] = useLatestState<PromptState>(EMPTY_PROMPT);
  const [candidates, setCandidates] = useState<string[]>([]);
  // Between the terminal's paste markers (bracketed paste): everything typed is text.
  const pasting = useRef(false);
  const edit = (e: PromptEdit) => update((s) => editPrompt(s, e));
  useBracketedPaste(isActive);

  useInput(
    (input, key) => {
      const marker = pasteMarker(input);
      if (marker) {
        pasting.current = marker === 'start';
        return;
      }
      if (pasting.current) {
        const text = pastedText(input);
        if (text !== '') edit({ type: 'insert', text });
        return;
      }
      const tab = () => {
        const s = get();
        const c = complete(s.value, s.cursor);
        edit({ type: 'set', value: c.value, ...(c.cursor !== undefined ? { cursor: c.cursor } : {}) });
        setCandidates(c.candidates.length > 1 ? c.candidates : []);
      };
      if (key.tab) return tab();
      // Typed ahead: the terminal read the word and the Tab after it in one chunk.
      if (input.length > 1 && input.endsWith('\t') && !/[\t\r\n]/.test(input.slice(0, -1))) {
        edit({ type: 'insert', text: input.slice(0, -1) });
        return tab();
      }
      setCandidates([]);
      const enter = () => {
        if (enterAction(get()) === 'newline') return void update(continueLine);
        const text = get().value;
        if (text.trim() === '') return;
        edit({ type: 'sent' });
        onSubmit(text.trim());
      };
      if (key.ctrl && input === 'c') return void edit({ type: 'clear' });
      if (key.return) return key.shift || key.meta ? void edit({ type: 'insert', text: '\n' }) : enter();
      // One line and Enter in a single chunk (typed by a script, or a pasted line): like a shell,
      // send it. Multi-line pastes keep their line breaks and wait for Enter.
      if (input.length > 1 && input.endsWith('\r') && !/[\r\n]/.test(input.slice(0, -1))) {
        edit({ type: 'insert', text: input.slice(0, -1) });
        return enter();
      }
      if (input === '\n') return void edit({ type: 'insert', text: '\n' });
      // Most terminals send DEL (0x7f) for Backspace, which Ink reports as `delete`.
      if (key.backspace || key.delete) return void edit({ type: 'backspace' });
      if (key.leftArrow) return void edit({ type: 'left' });
      if (key.rightArrow) return void edit({ type: 'right' });
      if (key.upArrow) return void edit({ type: 'up' });
      if (key.downArrow) return void edit({ type: 'down' });
      if (key.home || (key.ctrl && input === 'a')) return void edit({ type: 'home' });
      if (key.end || (key.ctrl && input === 'e')) return void edit({ type: 'end' });
      if (key.ctrl && input === 'u') return void edit({ type: 'clear' });
      if (key.ctrl || key.escape || input === '') return;
      edit({ type: 'insert', text: input });
    },
    { isActive },
  );

  const s = get();
  return (
    <Box flexDirection="column">
      <Box borderStyle="round" borderColor={isActive ? 'cyan' : 'gray'} paddingX={1} flexDirection="column">
        {s.value === '' ? (
          <Text>
            <Text color="cyan">{'› '}</Text>
            {isActive ? <Text inverse> </Text> : null}
            <Text dimColor>{placeholder ?? ''}</Text>
          </Text>
        ) : (
          <Lines state={s} showCursor={isActive} />
        )}
      </Box>
      {candidates.length > 0 ? <Text dimColor>{candidates.join('  ')}</Text> : null}
    </Box>
  );
}

/** The value with the cursor drawn as an inverse cell. */
function Lines({ state, showCursor }: { state: PromptState; showCursor: boolean }) {
  let offset = 0;
  return (
    <>
      {state.value.split('\n').map((line, i) => {
        const start = offset;
        offset += line.length + 1;
        const at = state.cursor - start;
        const hasCursor = showCursor && at >= 0 && at <= line.length;
        return (
          <Text key={i}>
            <Text color="cyan">{i === 0 ? '› ' : '  '}</Text>
            {hasCursor ? (
              <>
                {shown(line.slice(0, at))}
                <Text inverse>{shown(line[at] ?? ' ')}</Text>
                {shown(line.slice(at + 1))}
              </>
            ) : (
              shown(line)
            )}
          </Text>
        );
      })}
    </>
  );
}

/** A tab (pasted code) drawn as one space: the terminal would move to its next tab stop, off Ink's layout. */
function shown(text: string): string {
  return text.replace(/\t/g, ' ');
}
