import { Box, Text, useInput } from 'ink';
import { useState } from 'react';
import { fileCount, them, type QuitChoice } from '../pending-changes.js';

export interface QuitPromptProps {
  /** The session's changes the working tree has not received. */
  files: string[];
  isActive: boolean;
  onChoice: (changes: QuitChoice) => void;
  /** Stay in the session. */
  onCancel: () => void;
}

/** Files listed before the rest are counted. */
const SHOWN_FILES = 8;

/**
 * Asked on the way out when the session changed files the working tree lacks: apply them now,
 * keep them for the next run (the default, Enter), or discard them (asked twice). Esc stays.
 */
export function QuitPrompt({ files, isActive, onChoice, onCancel }: QuitPromptProps) {
  const [confirmDiscard, setConfirmDiscard] = useState(false);
  useInput(
    (input, key) => {
      if (key.ctrl) return;
      if (confirmDiscard) {
        if (input === 'd') return onChoice('discard');
        return setConfirmDiscard(false);
      }
      if (key.escape) return onCancel();
      if (input === 'a') return onChoice('apply');
      if (input === 'k' || key.return) return onChoice('keep');
      if (input === 'd') setConfirmDiscard(true);
    },
    { isActive },
  );
  const count = fileCount(files.length);
  const it = them(files.length);
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text bold>
        Before you go: {count} changed in this session {files.length === 1 ? 'is' : 'are'} not in your working tree.
      </Text>
      {files.slice(0, SHOWN_FILES).map((f) => (
        <Text key={f} wrap="truncate-end">
          {'  '}
          {f}
        </Text>
      ))}
      {files.length > SHOWN_FILES ? <Text dimColor>  … and {files.length - SHOWN_FILES} more</Text> : null}
      {confirmDiscard ? (
        <Text color="red">
          Discard the changes to {count} for good? d discards {it}, any other key goes back.
        </Text>
      ) : (
        <Text>
          <Text color="green">a</Text> apply {it} now · <Text color="cyan">k</Text> keep {it} for later (infinity-code -c, Enter) ·{' '}
          <Text color="red">d</Text> discard {it} · <Text color="gray">Esc</Text> stay
        </Text>
      )}
    </Box>
  );
}
