// History and content types, shaped like the Anthropic Messages API so a stored turn can be sent
// as-is: no per-completion conversion of the whole history.

export interface TextBlock {
  type: 'text';
  text: string;
  /** As the model gave them (a reply citing a document); kept so the turn goes back unchanged. */
  citations?: unknown[];
}

/**
 * The model's thinking, as streamed: under the default display its text is empty and the state
 * is in the signature. Sent back byte for byte: the signature is bound to the model and to
 * everything before the block, and the API refuses a block that moved, changed or lost its prefix.
 */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Thinking the API returned encrypted; sent back unchanged like any thinking block. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
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

export type ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock;

/** What an assistant turn holds besides tool calls: its text and its thinking, in reply order. */
export type ReplyBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock;

export function isThinking(b: ContentBlock): b is ThinkingBlock | RedactedThinkingBlock {
  return b.type === 'thinking' || b.type === 'redacted_thinking';
}

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
