// History and content types, shaped like the Anthropic Messages API so a stored turn can be sent
// as-is: no per-completion conversion of the whole history.

export interface TextBlock {
  type: 'text';
  text: string;
}

export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: ImageMediaType; data: string };
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type ResultContent = TextBlock | ImageBlock;

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: ResultContent[];
  is_error?: boolean;
}

export type ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock;

export interface HistoryMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export const ZERO_USAGE: Usage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
    cache_read_input_tokens: a.cache_read_input_tokens + b.cache_read_input_tokens,
  };
}

export function text(value: string): TextBlock {
  return { type: 'text', text: value };
}

/** Plain text of result content, images summarised (for displays and logs). */
export function resultText(content: readonly ResultContent[]): string {
  return content.map((c) => (c.type === 'text' ? c.text : `[image ${c.source.media_type}]`)).join('\n');
}
