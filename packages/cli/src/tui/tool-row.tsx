import { Box, Text } from 'ink';
import { Spinner } from './spinner.js';

export type ToolRowStatus = 'running' | 'ok' | 'error' | 'interrupted';

const MARK: Record<Exclude<ToolRowStatus, 'running'>, { mark: string; color: string }> = {
  ok: { mark: '⏺', color: 'green' },
  error: { mark: '⏺', color: 'red' },
  interrupted: { mark: '⏺', color: 'yellow' },
};

/**
 * One tool call: its display line, then a one-line summary of its result when finished, or the
 * last lines of its output while it runs (commands).
 */
export function ToolRow(props: { display: string; status: ToolRowStatus; summary?: string; tail?: string[]; animate?: boolean }) {
  const { display, status, summary, tail = [] } = props;
  return (
    <Box flexDirection="column">
      <Box>
        {status === 'running' ? <Spinner animate={props.animate ?? true} /> : <Text color={MARK[status].color}>{MARK[status].mark}</Text>}
        <Text bold> {display}</Text>
      </Box>
      {status === 'running' ? (
        <OutputTail lines={tail} />
      ) : (
        // Cut in the middle: the end says how many more lines there are.
        <Text wrap="truncate-middle" color={status === 'error' ? 'red' : status === 'interrupted' ? 'yellow' : undefined} dimColor={status === 'ok'}>
          {'  ⎿ '}
          {summary ?? ''}
        </Text>
      )}
    </Box>
  );
}

/** The live tail of a running command, or a placeholder before it printed anything. */
export function OutputTail({ lines }: { lines: string[] }) {
  if (lines.length === 0) return <Text dimColor>  ⎿ running…</Text>;
  return (
    <Box flexDirection="column">
      {lines.map((l, i) => (
        <Text key={i} dimColor wrap="truncate-end">
          {i === 0 ? '  ⎿ ' : '    '}
          {l}
        </Text>
      ))}
    </Box>
  );
}
