import { Box, Static, Text } from 'ink';
import { DiffLines } from './diff-lines.js';
import { Markdown } from './markdown.js';
import type { TranscriptItem } from './ui-state.js';
import { ToolRow } from './tool-row.js';
import { useColumns } from './use-columns.js';

const NOTICE: Record<string, { mark: string; color: string }> = {
  info: { mark: 'ℹ', color: 'gray' },
  error: { mark: '✗', color: 'red' },
  retry: { mark: '↻', color: 'yellow' },
  compaction: { mark: '≡', color: 'magenta' },
};

/** Lines of a finished note shown; the rest is folded (notes are progress, not the answer). */
export const NOTE_LINES = 4;

/** The model's progress notes between tool calls: dimmed, folded after a few lines. */
export function ThinkingNotes({ text, live = false, full = false }: { text: string; live?: boolean; full?: boolean }) {
  const lines = text.split('\n');
  // Live, the latest lines matter; finished, the first ones (they say what comes next).
  const shown = full || lines.length <= NOTE_LINES ? lines : live ? lines.slice(-NOTE_LINES) : lines.slice(0, NOTE_LINES);
  const folded = lines.length - shown.length;
  return (
    <Box marginTop={1} flexDirection="column">
      {live && folded > 0 ? <Text dimColor>  … {folded} earlier lines</Text> : null}
      <Box>
        <Text dimColor>{'✻ '}</Text>
        <Text dimColor italic>
          {shown.join('\n')}
        </Text>
      </Box>
      {!live && folded > 0 ? <Text dimColor>  … {folded} more lines of notes (/notes unfolds them)</Text> : null}
    </Box>
  );
}

/**
 * Finished items, printed once through <Static>: they scroll up with the terminal and are never
 * redrawn, so the live region below stays small however long the session gets.
 */
export function Transcript({ items, epoch }: { items: TranscriptItem[]; epoch: number }) {
  return (
    <Static key={epoch} items={items}>
      {(item) => <Entry key={item.id} item={item} />}
    </Static>
  );
}

export function Entry({ item }: { item: TranscriptItem }) {
  const columns = useColumns();
  switch (item.kind) {
    case 'user':
      return (
        <Box marginTop={1}>
          <Text color="cyan" bold>
            {'› '}
          </Text>
          <Text>{item.text}</Text>
        </Box>
      );
    case 'assistant':
      return (
        <Box marginTop={1}>
          <Text>{'● '}</Text>
          <Markdown text={item.text} width={columns - 2} />
        </Box>
      );
    case 'thinking':
      return <ThinkingNotes text={item.text} full={item.full === true} />;
    case 'tool':
      return <ToolRow display={item.display} status={item.status} summary={item.summary} output={item.output} diff={item.diff} />;
    case 'report':
      return (
        <Box flexDirection="column" marginTop={1}>
          <Text color="blue" bold>
            ↳ Report from {item.from}
            {item.diffStat ? <Text color="gray"> (changes: {item.diffStat})</Text> : null}
          </Text>
          <Box paddingLeft={2}>
            {item.text === '' && item.closed ? <Text dimColor>(it closed without a report)</Text> : <Markdown text={item.text} width={columns - 2} />}
          </Box>
        </Box>
      );
    case 'event':
      return (
        <Box flexDirection="column">
          <Text dimColor>
            ⎿ output of {item.source}
            {item.summary ? ` · ${item.summary}` : ''}
          </Text>
          {item.lines.map((l, i) => (
            <Text key={i} dimColor>{`    ${l}`}</Text>
          ))}
        </Box>
      );
    case 'notice': {
      const n = NOTICE[item.level];
      return (
        <Text color={n.color}>
          {n.mark} {item.text}
        </Text>
      );
    }
    case 'hunk':
      return (
        <Box flexDirection="column" marginTop={1}>
          <Text color="yellow">
            Under review: {item.path}
            {item.position ? ` ${item.position}` : ''}, all {item.lines.length} lines
          </Text>
          <DiffLines diff={[item.header, ...item.lines].join('\n')} max={Infinity} wrap />
        </Box>
      );
  }
}
