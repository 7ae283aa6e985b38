import { Box, Text } from 'ink';
import { busyLabel } from './busy-label.js';
import { StyledLines, useMarkdownLines } from './markdown.js';
import { Spinner } from './spinner.js';
import { ToolRow } from './tool-row.js';
import { ThinkingNotes } from './transcript.js';
import type { RunningTool } from './ui-state.js';
import { useColumns } from './use-columns.js';
import { useNow } from './use-now.js';

export interface LiveTurnProps {
  text: string;
  /** Thinking streaming now (null: none; '': a block with no text yet, or none to show). */
  thinking?: string | null;
  busy: boolean;
  /** When the root's completion began (epoch ms): the spinner says for how long. */
  since?: number;
  /** The model API has sent nothing since then (epoch ms): the spinner says so. */
  silentSince?: number;
  /** The root's calls awaiting their results. */
  running: RunningTool[];
  /** Rows of streaming text to show: the live region must stay shorter than the terminal. */
  maxLines: number;
  animate: boolean;
}

/**
 * What the root is doing now: running calls, the text streaming in (as markdown so far: an
 * unclosed code fence is code up to here), a spinner.
 */
export function LiveTurn({ text, thinking = null, busy, since, silentSince, running, maxLines, animate }: LiveTurnProps) {
  const noting = thinking !== null && thinking.trim() !== '';
  const lines = useMarkdownLines(text, useColumns() - 2);
  const hidden = Math.max(0, lines.length - maxLines);
  return (
    <Box flexDirection="column">
      {running.map((r) => (
        <ToolRow key={r.callId} display={r.display} status="running" tail={r.tail} passive={r.passive === true} animate={animate} />
      ))}
      {noting ? <ThinkingNotes text={thinking.trim()} live /> : null}
      {text.trim() !== '' ? (
        <Box marginTop={1} flexDirection="column">
          {hidden > 0 ? <Text dimColor>… {hidden} more lines above (shown in full when done)</Text> : null}
          <Box>
            <Text>{'● '}</Text>
            <StyledLines lines={hidden > 0 ? lines.slice(hidden) : lines} />
          </Box>
        </Box>
      ) : null}
      {busy ? (
        <Box marginTop={text.trim() === '' && running.length === 0 ? 1 : 0}>
          <Spinner animate={animate} />
          <BusyText
            writing={thinking === null && text.trim() !== ''}
            animate={animate}
            {...(since !== undefined ? { since } : {})}
            {...(silentSince !== undefined ? { silentSince } : {})}
          />
        </Box>
      ) : null}
    </Box>
  );
}

/**
 * Its clock ticks only while it is shown and animated. Without animation (tests, screen readers)
 * the running time is left out, so frames stay stable; a silent API is still said.
 */
function BusyText({ writing, since, silentSince, animate }: { writing: boolean; since?: number; silentSince?: number; animate: boolean }) {
  const now = useNow(animate);
  return (
    <Text dimColor>
      {' '}
      {busyLabel({ writing, now, ...(animate && since !== undefined ? { since } : {}), ...(silentSince !== undefined ? { silentSince } : {}) })}
    </Text>
  );
}
