// A deterministic stand-in for the tokenizer: close enough in size that cache thresholds and
// benchmarks behave like the real service, and exact enough that tests can assert the numbers.

/** What one image is counted as, whatever its size (a ~1 megapixel image costs about this much). */
export const IMAGE_TOKENS = 1600;

/** About four characters a token, rounded up so any non-empty text costs at least one. */
export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Tokens of one content block, tool definition or system block: text by its text, a thinking
 * block by its thinking text (its signature is state, not prompt), an image by IMAGE_TOKENS, a
 * tool result by what it holds, anything else by its JSON. Markers (cache_control) are not part of
 * the prompt, so they cost nothing.
 */
export function blockTokens(block: unknown): number {
  if (!isRecord(block)) return textTokens(JSON.stringify(block) ?? '');
  if (block.type === 'text' && typeof block.text === 'string') return textTokens(block.text);
  if (block.type === 'thinking' && typeof block.thinking === 'string') return textTokens(block.thinking);
  if (block.type === 'image') return IMAGE_TOKENS;
  if (block.type === 'tool_result' && Array.isArray(block.content)) {
    const { content, ...rest } = withoutCacheControl(block);
    return textTokens(JSON.stringify(rest)) + (content as unknown[]).reduce<number>((n, b) => n + blockTokens(b), 0);
  }
  return textTokens(JSON.stringify(withoutCacheControl(block)));
}

export function withoutCacheControl(block: Record<string, unknown>): Record<string, unknown> {
  if (!('cache_control' in block)) return block;
  const { cache_control: _marker, ...rest } = block;
  return rest;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
