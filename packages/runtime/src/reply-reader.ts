// Reads the Messages API's stream events into a completion's StreamEvents: every block is
// accumulated by its index and handed on whole, tool calls with their parsed input, text and
// thinking exactly as they came.
import type Anthropic from '@anthropic-ai/sdk';
import type { Usage } from './messages.js';
import type { StopDetails, StreamEvent } from './provider.js';

/** A block being streamed, by its index in the reply. */
type OpenBlock =
  | { type: 'tool_use'; id: string; name: string; json: string; initial: unknown }
  | { type: 'text'; text: string; citations: unknown[] }
  | { type: 'thinking'; thinking: string; signature: string };

/**
 * Turns raw stream events into StreamEvents. Every block is accumulated by its index and handed
 * on whole when it stops: tool calls with their parsed input, text and thinking exactly as they
 * came (thinking's signature binds it to the conversation, so not a byte may change).
 */
export class TurnReader {
  finished = false;
  readonly #open = new Map<number, OpenBlock>();
  readonly #usage: Usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  #stopReason: string | null = null;
  #stopDetails: StopDetails | undefined;

  *read(event: Anthropic.RawMessageStreamEvent): Generator<StreamEvent> {
    switch (event.type) {
      case 'message_start': {
        const u = event.message.usage;
        this.#usage.input_tokens = count(u.input_tokens);
        this.#usage.cache_creation_input_tokens = count(u.cache_creation_input_tokens);
        this.#usage.cache_read_input_tokens = count(u.cache_read_input_tokens);
        this.#usage.output_tokens = count(u.output_tokens);
        break;
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text') {
          this.#open.set(event.index, { type: 'text', text: block.text, citations: [...(block.citations ?? [])] });
          if (block.text) yield { type: 'text', text: block.text };
        } else if (block.type === 'thinking') {
          this.#open.set(event.index, { type: 'thinking', thinking: block.thinking, signature: block.signature });
          // Said at once, empty or not: a display shows the model is thinking.
          yield { type: 'thinking', text: block.thinking };
        } else if (block.type === 'redacted_thinking') {
          yield { type: 'thinking', text: '' };
          yield { type: 'block', block: { type: 'redacted_thinking', data: block.data } };
        } else if (block.type === 'tool_use') {
          this.#open.set(event.index, { type: 'tool_use', id: block.id, name: block.name, json: '', initial: block.input });
          yield { type: 'tool_use_start', id: block.id, name: block.name };
        }
        break;
      }
      case 'content_block_delta': {
        const d = event.delta;
        const open = this.#open.get(event.index);
        if (d.type === 'text_delta' && open?.type === 'text') {
          open.text += d.text;
          yield { type: 'text', text: d.text };
        } else if (d.type === 'citations_delta' && open?.type === 'text') {
          open.citations.push(d.citation);
        } else if (d.type === 'thinking_delta' && open?.type === 'thinking') {
          open.thinking += d.thinking;
          if (d.thinking) yield { type: 'thinking', text: d.thinking };
        } else if (d.type === 'signature_delta' && open?.type === 'thinking') {
          open.signature = d.signature;
        } else if (d.type === 'input_json_delta' && open?.type === 'tool_use') {
          open.json += d.partial_json;
        }
        break;
      }
      case 'content_block_stop': {
        const open = this.#open.get(event.index);
        this.#open.delete(event.index);
        if (open?.type === 'tool_use') {
          yield { type: 'tool_use', id: open.id, name: open.name, ...parseToolInput(open.json, open.initial) };
        } else if (open?.type === 'text') {
          yield { type: 'block', block: { type: 'text', text: open.text, ...(open.citations.length > 0 && { citations: open.citations }) } };
        } else if (open?.type === 'thinking') {
          yield { type: 'block', block: { type: 'thinking', thinking: open.thinking, signature: open.signature } };
        }
        break;
      }
      case 'message_delta': {
        this.#stopReason = event.delta.stop_reason ?? this.#stopReason;
        const details = event.delta.stop_details;
        if (details) {
          this.#stopDetails = {
            ...(details.category != null && { category: details.category }),
            ...(details.explanation != null && { explanation: details.explanation }),
          };
        }
        this.#usage.output_tokens = count(event.usage.output_tokens);
        break;
      }
      case 'message_stop':
        this.finished = true;
        yield {
          type: 'done',
          stopReason: this.#stopReason,
          usage: { ...this.#usage },
          ...(this.#stopDetails && { stopDetails: this.#stopDetails }),
        };
        break;
    }
  }
}

function count(n: number | null | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) ? n : 0;
}

/** Bad model JSON is the model's problem to fix, so it becomes `inputError`, never a throw. */
function parseToolInput(json: string, initial: unknown): { input: Record<string, unknown>; inputError?: string } {
  if (json.trim() === '') return { input: isObject(initial) ? initial : {} };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { input: {}, inputError: `Tool input is not valid JSON (${reason}): ${clip(json)}` };
  }
  if (isObject(value)) return { input: value };
  const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  return { input: {}, inputError: `Tool input must be a JSON object, got ${kind}: ${clip(json)}` };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keeps error messages to one readable line. */
export function clip(s: string, max = 200): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

