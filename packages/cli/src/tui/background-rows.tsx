import { Box, Text } from 'ink';
import { Spinner } from './spinner.js';
import { OutputTail } from './tool-row.js';
import type { BackgroundCommand, ChildThread } from './ui-state.js';

export interface BackgroundRowsProps {
  commands: BackgroundCommand[];
  rootThreadId: string;
  /** To say which child a command belongs to. */
  threads: ChildThread[];
  animate: boolean;
  maxRows?: number;
}

/**
 * Commands still running in the background, each with the last lines of its output. The newest
 * `maxRows` are shown, so a thread starting many can't push the live region off the screen.
 */
export function BackgroundRows({ commands, rootThreadId, threads, animate, maxRows = 4 }: BackgroundRowsProps) {
  if (commands.length === 0) return null;
  const shown = commands.slice(-maxRows);
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text dimColor>Running in the background ({commands.length})</Text>
      {commands.length > shown.length ? <Text dimColor>  … {commands.length - shown.length} more above</Text> : null}
      {shown.map((c) => {
        const owner = c.threadId === rootThreadId ? undefined : threads.find((t) => t.id === c.threadId)?.label;
        return (
          <Box key={`${c.threadId}\u0000${c.callId}`} flexDirection="column">
            <Box>
              <Spinner animate={animate} />
              <Text bold wrap="truncate-end">
                {' '}
                {c.display}
              </Text>
              {owner ? <Text color="gray" wrap="truncate-end"> · {owner}</Text> : null}
            </Box>
            <OutputTail lines={c.tail} />
          </Box>
        );
      })}
    </Box>
  );
}
