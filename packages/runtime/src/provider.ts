import type { HistoryMessage, Usage } from './messages.js';
import type { ToolDefinition } from './tool.js';

export interface CompletionRequest {
  model: string;
  system: string;
  messages: readonly HistoryMessage[];
  tools: readonly ToolDefinition[];
  maxTokens: number;
}

/**
 * What a provider streams. Tool calls arrive whole (`tool_use`) once their input is complete;
 * `inputError` is set when the model's argument JSON did not parse.
 */
export type StreamEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_use_start'; id: string; name: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; inputError?: string }
  | { type: 'done'; stopReason: string | null; usage: Usage };

/**
 * A model provider streams one completion. It throws ModelError for failures; a stream that ends
 * without a `done` event counts as cut. It must stop promptly when `signal` aborts.
 */
export interface ModelProvider {
  readonly name: string;
  stream(request: CompletionRequest, signal: AbortSignal): AsyncIterable<StreamEvent>;
  /**
   * Starts loading what the first completion needs (a client library, the HTTP stack) without
   * waiting for it, so that loading overlaps the caller's other start-up work instead of
   * delaying the first request. Optional; calling it again does nothing.
   */
  warm?(): void;
}
