import { Box, Text } from 'ink';
import { DiffLines } from './diff-lines.js';
import { Spinner } from './spinner.js';

export type ToolRowStatus = 'running' | 'ok' | 'error' | 'interrupted';

const MARK: Record<Exclude<ToolRowStatus, 'running'>, { mark: string; color: string }> = {
  ok: { mark: '⏺', color: 'green' },
  error: { mark: '⏺', color: 'red' },
  interrupted: { mark: '⏺', color: 'yellow' },
};

export interface ToolRowProps {
  display: string;
  status: ToolRowStatus;
  summary?: string;
  /** Running: the last lines of its output so far. */
  tail?: string[];
  /** Running: a wait (sleep), which waits rather than runs. */
  passive?: boolean;
  /** Finished: a few lines of its output worth showing. */
  output?: string[];
  /** Finished: what it changed, as a unified diff. */
  diff?: string;
  animate?: boolean;
}

/**
 * One tool call: its display line, then a one-line summary of its result when finished (with the
 * end of its output and its diff when the tool gave them), or the last lines of its output while
 * it runs (commands).
 */
export function ToolRow(props: ToolRowProps) {
  const { display, status, summary, tail = [], output = [] } = props;
  return (
    <Box flexDirection="column">
      <Box>
        {/* A wait (sleep) runs nothing: a still mark, no redraws. */}
        {status !== 'running' ? (
          <Text color={MARK[status].color}>{MARK[status].mark}</Text>
        ) : props.passive ? (
          <Text color="gray">◌</Text>
        ) : (
          <Spinner animate={props.animate ?? true} />
        )}
        <Text bold> {display}</Text>
      </Box>
      {status === 'running' ? (
        <OutputTail lines={tail} waiting={props.passive} />
      ) : (
        <>
          {/* Cut in the middle: the end says how many more lines there are. */}
          <Text wrap="truncate-middle" color={status === 'error' ? 'red' : status === 'interrupted' ? 'yellow' : undefined} dimColor={status === 'ok'}>
            {'  ⎿ '}
            {summary ?? ''}
          </Text>
          {output.map((l, i) => (
            <Text key={i} dimColor wrap="truncate-end">
              {'    '}
              {l}
            </Text>
          ))}
          {props.diff ? <DiffLines diff={props.diff} /> : null}
        </>
      )}
    </Box>
  );
}

/** The live tail of a running command, or a placeholder before it printed anything. */
export function OutputTail({ lines, waiting = false }: { lines: string[]; waiting?: boolean | undefined }) {
  if (lines.length === 0) return <Text dimColor>  ⎿ {waiting ? 'waiting…' : 'running…'}</Text>;
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
