import { Box, Text } from 'ink';
import { formatCost, formatTokens, shortId } from './format.js';
import type { StatusInfo } from './ui-state.js';

export function contextPercent(s: StatusInfo): number | undefined {
  return s.contextWindow > 0 ? Math.round((100 * s.contextTokens) / s.contextWindow) : undefined;
}

/** Model, tokens, cost, context use, sandbox and session: what each turn costs is always visible. */
export function StatusLine({ status, hint }: { status: StatusInfo; hint?: string }) {
  const u = status.usage;
  const tokensIn = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
  const pct = contextPercent(status);
  const pctColor = pct === undefined ? 'gray' : pct >= 75 ? 'red' : pct >= 60 ? 'yellow' : 'gray';
  return (
    <Box flexDirection="column">
      {/* One line, cut at the terminal's edge rather than wrapped into the input above. */}
      <Text wrap="truncate-end" color="gray">
        {status.model} · ↑{formatTokens(tokensIn)} ↓{formatTokens(u.output_tokens)} · {formatCost(status.cost, status.costPartial)} ·{' '}
        <Text color={pctColor}>ctx {pct === undefined ? 'n/a' : `${pct}%`}</Text> · sandbox {status.backend} · session{' '}
        {shortId(status.sessionId)}
      </Text>
      {hint ? <Text color="yellow">{hint}</Text> : null}
    </Box>
  );
}
