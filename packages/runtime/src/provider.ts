import type { HistoryMessage, ReplyBlock, Usage } from './messages.js';
import type { Effort } from './models.js';
import type { ToolDefinition } from './tool.js';

/** What thinking text comes back: the model's progress notes between tool calls, or none. */
export type ThinkingDisplay = 'summarized' | 'omitted';

/** Why a reply was refused (`stop_reason: refusal`), as the API explains it. */
export interface StopDetails {
  category?: string;
  explanation?: string;
}

export interface CompletionRequest {
  model: string;
  system: string;
  messages: readonly HistoryMessage[];
  tools: readonly ToolDefinition[];
  maxTokens: number;
  /** `output_config.effort`; left out, the model's own default applies. */
  effort?: Effort;
  /** Asked of models that think (see models.ts); default 'summarized'. */
  thinkingDisplay?: ThinkingDisplay;
}

/**
 * What a provider streams. Tool calls arrive whole (`tool_use`) once their input is complete;
 * `inputError` is set when the model's argument JSON did not parse.
 */
export type StreamEvent =
  | { type: 'text'; text: string }
  /** A piece of thinking text as it streams (for displays; the block comes whole below). */
  | { type: 'thinking'; text: string }
  /**
   * A finished text or thinking block exactly as the model gave it, in reply order. Providers
   * that send these make them the turn's content (text deltas are then for displays only);
   * providers that never do get their text deltas joined into text blocks.
   */
  | { type: 'block'; block: ReplyBlock }
  | { type: 'tool_use_start'; id: string; name: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; inputError?: string }
  | { type: 'done'; stopReason: string | null; usage: Usage; stopDetails?: StopDetails };

/** What a provider tells its caller beside the events it streams. */
export interface StreamWatch {
  /**
   * Something came from the API: the response, or any bytes of it, keep-alive pings and pieces of
   * a tool call's input included, which yield no event. The caller's stall timeout counts these,
   * so a model thinking for minutes in silence (pings only) is not taken for a dead stream.
   */
  onData(): void;
}

/**
 * A model provider streams one completion. It throws ModelError for failures; a stream that ends
 * without a `done` event counts as cut. It must stop promptly when `signal` aborts.
 */
export interface ModelProvider {
  readonly name: string;
  stream(request: CompletionRequest, signal: AbortSignal, watch?: StreamWatch): AsyncIterable<StreamEvent>;
  /**
   * Starts loading what the first completion needs (a client library, the HTTP stack) without
   * waiting for it, so that loading overlaps the caller's other start-up work instead of
   * delaying the first request. Optional; calling it again does nothing.
   */
  warm?(): void;
}
