import { Box, Text } from 'ink';
import { Spinner } from './spinner.js';

export type ToolRowStatus = 'running' | 'ok' | 'error' | 'interrupted';

const MARK: Record<Exclude<ToolRowStatus, 'running'>, { mark: string; color: string }> = {
  ok: { mark: '⏺', color: 'green' },
  error: { mark: '⏺', color: 'red' },
  interrupted: { mark: '⏺', color: 'yellow' },
};

/** One tool call: its display line, then (when finished) a one-line summary of its result. */
export function ToolRow(props: { display: string; status: ToolRowStatus; summary?: string; animate?: boolean }) {
  const { display, status, summary } = props;
  return (
    <Box flexDirection="column">
      <Box>
        {status === 'running' ? <Spinner animate={props.animate ?? true} /> : <Text color={MARK[status].color}>{MARK[status].mark}</Text>}
        <Text bold> {display}</Text>
      </Box>
      {status === 'running' ? (
        <Text dimColor>  ⎿ running…</Text>
      ) : (
        <Text wrap="truncate-end" color={status === 'error' ? 'red' : status === 'interrupted' ? 'yellow' : undefined} dimColor={status === 'ok'}>
          {'  ⎿ '}
          {summary ?? ''}
        </Text>
      )}
    </Box>
  );
}
