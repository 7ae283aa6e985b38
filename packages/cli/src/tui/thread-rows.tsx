import { Box, Text } from 'ink';
import { Spinner } from './spinner.js';
import type { ChildThread } from './ui-state.js';

/** What a child is doing, in a few words. */
export function activity(t: ChildThread): string {
  if (t.working) return t.tool ? t.tool : 'thinking';
  if (t.tool) return t.waiting === 'passive' ? `asleep (${t.tool})` : `waiting on ${t.tool}`;
  return t.outcome ?? 'starting';
}

/**
 * One row per live child thread (compaction helpers are not shown: they have a notice). At most
 * `maxRows`, busy ones first, so dozens of children can't push the live region off the screen.
 */
export function ThreadRows({ threads, animate, maxRows = 8 }: { threads: ChildThread[]; animate: boolean; maxRows?: number }) {
  const live = threads.filter((t) => t.kind !== 'compaction');
  if (live.length === 0) return null;
  const keep = new Set([...live.filter((t) => t.working), ...live.filter((t) => !t.working)].slice(0, maxRows));
  const shown = live.filter((t) => keep.has(t));
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text dimColor>Threads ({live.length})</Text>
      {shown.map((t) => (
        <Box key={t.id} paddingLeft={2 * t.depth - 1}>
          <ThreadMark thread={t} animate={animate} />
          {/* One line each, cut at the terminal's edge; the label gives way first. */}
          <Box flexShrink={4}>
            <Text wrap="truncate-end"> {t.label}</Text>
          </Box>
          <Box flexShrink={1}>
            <Text wrap="truncate-end" color={t.outcome === 'failed' ? 'red' : 'gray'}>
              {' '}
              · {activity(t)}
            </Text>
          </Box>
        </Box>
      ))}
      {live.length > shown.length ? <Text dimColor>  … and {live.length - shown.length} more</Text> : null}
    </Box>
  );
}

/** A spinner while it works; still while it only waits for the user (a spinner there would redraw for nothing). */
function ThreadMark({ thread, animate }: { thread: ChildThread; animate: boolean }) {
  if (thread.awaitingUser) return <Text color="yellow">◆</Text>;
  return thread.working ? <Spinner animate={animate} /> : <Text color="gray">◇</Text>;
}
