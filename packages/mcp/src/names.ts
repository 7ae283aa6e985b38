import { createHash } from 'node:crypto';

/** The longest tool name the Messages API takes. */
export const MAX_TOOL_NAME = 64;

/**
 * `mcp__<server>__<tool>`, the name the model calls a server's tool by (Claude Code's scheme).
 * A name with characters the API doesn't allow (they become `_`) or too long (cut) ends with a
 * hash of the full one, so two such names stay apart.
 */
export function modelToolName(server: string, tool: string): string {
  const full = `mcp__${server}__${tool}`;
  const clean = full.replace(/[^A-Za-z0-9_-]/g, '_');
  if (clean === full && clean.length <= MAX_TOOL_NAME) return clean;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${clean.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}
