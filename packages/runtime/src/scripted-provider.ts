import { randomUUID } from 'node:crypto';
import type { ModelError } from './errors.js';
import type { Usage } from './messages.js';
import type { CompletionRequest, ModelProvider, StopDetails, StreamEvent } from './provider.js';

export interface ScriptedCall {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

/** One scripted reply: what a brain decides the model says. */
export interface ScriptedReply {
  /**
   * A thinking block that opens the reply (as current models' replies open), with this text
   * (may be empty) and a signature of the scripted provider's own.
   */
  thinking?: string;
  text?: string;
  toolCall?: ScriptedCall;
  /** Several calls in one reply (after `text` and `toolCall`), as current models make them. */
  toolCalls?: ScriptedCall[];
  /** Text after the calls (models sometimes add a line after their calls). */
  textAfter?: string;
  /** Raw argument text, to script a model sending invalid JSON. */
  rawToolInput?: string;
  usage?: Partial<Usage>;
  /** How many chunks the text is streamed in (default 12). */
  chunks?: number;
  /** Stream these chunks instead of splitting `text` (lets a test pace or hold a stream). */
  textStream?: AsyncIterable<string>;
  /** Fail the attempt with this error instead of replying. */
  error?: ModelError;
  /** Stream this many text chunks, then end without finishing (a cut stream). */
  cutAfterChunks?: number;
  /** The reply's stop_reason (default: tool_use when it has calls, else end_turn). */
  stopReason?: string;
  stopDetails?: StopDetails;
}

/** A function from the request to the reply: the model's decisions, for tests and benchmarks. */
export type Brain = (request: CompletionRequest) => ScriptedReply | Promise<ScriptedReply>;

/** Replays a brain as a streamed completion, in chunks, honouring abort between chunks. */
export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted';

  constructor(private readonly brain: Brain) {}

  async *stream(request: CompletionRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
    const reply = await this.brain(request);
    if (reply.error) throw reply.error;
    if (reply.thinking !== undefined) {
      yield { type: 'thinking', text: '' };
      if (reply.thinking) yield { type: 'thinking', text: reply.thinking };
      yield { type: 'block', block: { type: 'thinking', thinking: reply.thinking, signature: `scripted:${reply.thinking.length}` } };
    }
    const chunks = reply.textStream ?? split(reply.text ?? '', reply.chunks ?? 12);
    let sent = 0;
    let length = 0;
    for await (const chunk of chunks) {
      if (signal.aborted) throw abortError();
      if (reply.cutAfterChunks !== undefined && sent >= reply.cutAfterChunks) return;
      sent++;
      length += chunk.length;
      yield { type: 'text', text: chunk };
    }
    if (signal.aborted) throw abortError();
    if (reply.cutAfterChunks !== undefined) return;
    if (reply.toolCall || reply.rawToolInput !== undefined) {
      const id = reply.toolCall?.id ?? `toolu_${randomUUID()}`;
      const name = reply.toolCall?.name ?? 'unknown';
      yield { type: 'tool_use_start', id, name };
      if (reply.rawToolInput !== undefined) {
        yield { type: 'tool_use', id, name, input: {}, inputError: parseError(reply.rawToolInput) };
      } else {
        yield { type: 'tool_use', id, name, input: reply.toolCall!.input };
      }
    }
    for (const call of reply.toolCalls ?? []) {
      const id = call.id ?? `toolu_${randomUUID()}`;
      yield { type: 'tool_use_start', id, name: call.name };
      yield { type: 'tool_use', id, name: call.name, input: call.input };
    }
    if (reply.textAfter) {
      length += reply.textAfter.length;
      yield { type: 'text', text: reply.textAfter };
    }
    const calls = reply.toolCall || reply.rawToolInput !== undefined || (reply.toolCalls?.length ?? 0) > 0;
    yield {
      type: 'done',
      stopReason: reply.stopReason ?? (calls ? 'tool_use' : 'end_turn'),
      ...(reply.stopDetails && { stopDetails: reply.stopDetails }),
      usage: {
        input_tokens: reply.usage?.input_tokens ?? 10 * request.messages.length,
        output_tokens: reply.usage?.output_tokens ?? Math.ceil(length / 4),
        cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? 0,
      },
    };
  }
}

function split(value: string, chunks: number): string[] {
  if (value === '') return [];
  const size = Math.ceil(value.length / Math.max(1, chunks));
  const out: string[] = [];
  for (let i = 0; i < value.length; i += size) out.push(value.slice(i, i + size));
  return out;
}

function parseError(raw: string): string {
  try {
    JSON.parse(raw);
    return 'arguments must be a JSON object';
  } catch (err) {
    return (err as Error).message;
  }
}

function abortError(): Error {
  const err = new Error('The completion was cancelled.');
  err.name = 'AbortError';
  return err;
}
