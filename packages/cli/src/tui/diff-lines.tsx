import { Box, Text } from 'ink';
import { terminalSafe } from '../terminal-safe.js';

/** Diff lines a finished edit shows in the transcript; the review shows diffs in full. */
export const DIFF_LINES = 12;

/**
 * A call's change as a few coloured lines of its unified diff. The file header lines go (the
 * row above names the file); the rest is cut at `max`, saying how much more there is. Lines are
 * cut at the terminal's edge unless `wrap` (a diff shown whole is read to the end of each line).
 */
export function DiffLines({ diff, max = DIFF_LINES, wrap = false }: { diff: string; max?: number; wrap?: boolean }) {
  const lines = diff.split('\n');
  const body = lines.slice(headerLength(lines));
  const shown = body.slice(0, max);
  return (
    <Box flexDirection="column" paddingLeft={4}>
      {shown.map((l, i) => (
        <Text key={i} wrap={wrap ? 'wrap' : 'truncate-end'} color={l.startsWith('@@') ? 'cyan' : l.startsWith('+') ? 'green' : l.startsWith('-') ? 'red' : undefined} dimColor={l.startsWith(' ')}>
          {l === '' ? ' ' : terminalSafe(l)}
        </Text>
      ))}
      {body.length > max ? <Text dimColor>… {body.length - max} more lines</Text> : null}
    </Box>
  );
}

/** How many lines of unified diff file headers (`---` and `+++`) come first. */
function headerLength(lines: readonly string[]): number {
  let n = 0;
  while (n < lines.length && /^(---|\+\+\+) /.test(lines[n])) n++;
  return n;
}
