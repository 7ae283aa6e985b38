import { Box, Text } from 'ink';
import { truncate } from './format.js';
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
export function ThreadRows({ threads, animate, maxRows = 8, columns = 80 }: { threads: ChildThread[]; animate: boolean; maxRows?: number; columns?: number }) {
  const live = threads.filter((t) => t.kind !== 'compaction');
  if (live.length === 0) return null;
  const keep = new Set([...live.filter((t) => t.working), ...live.filter((t) => !t.working)].slice(0, maxRows));
  const shown = live.filter((t) => keep.has(t));
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text dimColor>Threads ({live.length})</Text>
      {shown.map((t) => {
        const indent = 2 * t.depth - 1;
        const { label, activity } = rowText(t, columns - indent - 2);
        return (
          <Box key={t.id} paddingLeft={indent}>
            <ThreadMark thread={t} animate={animate} />
            <Text> {label}</Text>
            <Text color={t.outcome === 'failed' ? 'red' : 'gray'}> · {activity}</Text>
          </Box>
        );
      })}
      {live.length > shown.length ? <Text dimColor>  … and {live.length - shown.length} more</Text> : null}
    </Box>
  );
}

/**
 * One line each, cut at the terminal's edge (`width` after the mark): the label gives way
 * first, down to a few words, then the activity.
 */
export function rowText(t: ChildThread, width: number): { label: string; activity: string } {
  const doing = activity(t);
  const room = width - 1 - 3; // the space after the mark, " · "
  const minLabel = Math.min(t.label.length, 20);
  const activityRoom = Math.max(1, room - minLabel);
  const shownActivity = truncate(doing, activityRoom);
  return { label: truncate(t.label, Math.max(1, room - shownActivity.length)), activity: shownActivity };
}

/** A spinner while it works; still while it only waits for the user (a spinner there would redraw for nothing). */
function ThreadMark({ thread, animate }: { thread: ChildThread; animate: boolean }) {
  if (thread.awaitingUser) return <Text color="yellow">◆</Text>;
  return thread.working ? <Spinner animate={animate} /> : <Text color="gray">◇</Text>;
}
