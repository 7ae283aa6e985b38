// The request as the service renders it for caching: one position per block, in the order tools,
// system, messages, each with its token cost and a hash of everything up to and including it.
import { createHash } from 'node:crypto';
import { blockTokens, isRecord, withoutCacheControl } from './token-estimate.js';

export interface PrefixBlock {
  /** Tokens of this block alone. */
  tokens: number;
  /** Carries `cache_control: {type: 'ephemeral'}`: the prefix up to here may be written. */
  breakpoint: boolean;
  /** The marker's lifetime: `ttl: '1h'`, else the default 5 minutes. */
  ttl: '5m' | '1h';
  /** Where the block came from, for messages: `tools.0`, `system.1`, `messages.2.content.0`. */
  path: string;
  /** Identifies the block's content and place, but not its marker. */
  key: string;
}

/** Every block of the request in render order. Malformed parts are skipped: validation reports them. */
export function prefixBlocks(body: Record<string, unknown>): PrefixBlock[] {
  const out: PrefixBlock[] = [];
  const add = (block: unknown, path: string, place: string): void => {
    const rec = isRecord(block) ? block : undefined;
    const marker = rec?.cache_control;
    out.push({
      tokens: blockTokens(block),
      breakpoint: isRecord(marker) && marker.type === 'ephemeral',
      ttl: isRecord(marker) && marker.ttl === '1h' ? '1h' : '5m',
      path,
      // The place (section, message index and role) is part of the key: the same text as a user
      // turn and as an assistant turn, or split across two messages, renders differently.
      key: `${place}\n${JSON.stringify(rec ? withoutCacheControl(rec) : block)}`,
    });
  };
  if (Array.isArray(body.tools)) body.tools.forEach((t, i) => add(t, `tools.${i}`, 'tools'));
  if (typeof body.system === 'string') add({ type: 'text', text: body.system }, 'system', 'system');
  else if (Array.isArray(body.system)) body.system.forEach((b, i) => add(b, `system.${i}`, 'system'));
  if (Array.isArray(body.messages)) {
    body.messages.forEach((m, i) => {
      if (!isRecord(m)) return;
      const place = `messages.${i}.${String(m.role)}`;
      if (typeof m.content === 'string') add({ type: 'text', text: m.content }, `messages.${i}.content`, place);
      else if (Array.isArray(m.content)) m.content.forEach((b, j) => add(b, `messages.${i}.content.${j}`, place));
    });
  }
  return out;
}

/**
 * Chained hashes: entry i names the prefix of blocks 0..i (of this model), so two requests share
 * entry i exactly when their first i+1 blocks are identical. Stops at `upTo` (inclusive).
 */
export function prefixHashes(model: string, blocks: readonly PrefixBlock[], upTo = blocks.length - 1): string[] {
  const out: string[] = [];
  let prev = createHash('sha256').update(`model\n${model}`).digest('hex');
  for (let i = 0; i <= upTo && i < blocks.length; i++) {
    prev = createHash('sha256').update(prev).update('\n').update(blocks[i].key).digest('hex');
    out.push(prev);
  }
  return out;
}
