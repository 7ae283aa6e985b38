// A reply in the real API's shapes: the SSE event sequence of a streamed reply, or one JSON message.
import type { FakeUsage } from './fake-types.js';
import { sentBlock, type ReplyBlock } from './reply-content.js';

export interface Frame {
  /** The `event:`/`data:` text of one SSE event. */
  text: string;
  /** Characters of model output the frame carries, which is what pacing spreads time over. */
  outChars: number;
}

export interface ReplyShape {
  id: string;
  model: string;
  blocks: readonly ReplyBlock[];
  stopReason: string;
  /** The stop sequence that fired (stop_reason stop_sequence), else null. */
  stopSequence: string | null;
  /** `{type: 'refusal', category, explanation}` for a refusal, else null. */
  stopDetails: Record<string, unknown> | null;
  usage: Required<FakeUsage>;
  /** text_delta and thinking_delta pieces per block. */
  chunks: number;
  /** Blocks left out of the prompt, reported when the request asked for them (binding beta). */
  inputTransformations?: readonly unknown[];
}

export function sseFrames(r: ReplyShape): Frame[] {
  const out: Frame[] = [
    frame('message_start', {
      type: 'message_start',
      message: {
        ...messageShell(r.id, r.model),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        usage: { ...r.usage, output_tokens: Math.min(1, r.usage.output_tokens) },
        ...transformations(r),
      },
    }),
  ];
  let pinged = false;
  r.blocks.forEach((block, index) => {
    const start = (content_block: unknown): void => {
      out.push(frame('content_block_start', { type: 'content_block_start', index, content_block }));
      // Ping after the first text or thinking start: replies without thinking keep the frame
      // positions that tests cut at (cutAfterChunks) where they were.
      if (!pinged && block.type !== 'tool_use') out.push(frame('ping', { type: 'ping' }));
      pinged ||= block.type !== 'tool_use';
    };
    switch (block.type) {
      case 'text':
        start({ type: 'text', text: '' });
        for (const piece of split(block.text, r.chunks)) out.push(delta(index, { type: 'text_delta', text: piece }, piece));
        break;
      case 'thinking':
        // Text in thinking_delta pieces (none when the display hides it), the signature last.
        start({ type: 'thinking', thinking: '', signature: '' });
        if (block.thinking !== '') {
          for (const piece of split(block.thinking, r.chunks)) out.push(delta(index, { type: 'thinking_delta', thinking: piece }, piece));
        }
        out.push(delta(index, { type: 'signature_delta', signature: block.signature }, ''));
        break;
      case 'redacted_thinking':
        start({ type: 'redacted_thinking', data: block.data });
        break;
      case 'tool_use':
        start({ type: 'tool_use', id: block.id, name: block.name, input: {} });
        // The real API opens with an empty partial_json, then sends the JSON in arbitrary slices.
        for (const piece of ['', ...split(block.json, 3)]) {
          out.push(delta(index, { type: 'input_json_delta', partial_json: piece }, piece));
        }
        break;
    }
    out.push(frame('content_block_stop', { type: 'content_block_stop', index }));
  });
  out.push(
    frame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: r.stopReason, stop_sequence: r.stopSequence, stop_details: r.stopDetails },
      usage: { output_tokens: r.usage.output_tokens },
    }),
    frame('message_stop', { type: 'message_stop' }),
  );
  return out;
}

/** The reply to a non-streaming request. */
export function wholeMessage(r: ReplyShape): Record<string, unknown> {
  return {
    ...messageShell(r.id, r.model),
    content: r.blocks.map(sentBlock),
    stop_reason: r.stopReason,
    stop_sequence: r.stopSequence,
    stop_details: r.stopDetails,
    usage: r.usage,
    ...transformations(r),
  };
}

/** `input_transformations` as the binding-controls beta reports them: one entry per dropped block. */
function transformations(r: ReplyShape): Record<string, unknown> {
  return r.inputTransformations ? { input_transformations: r.inputTransformations } : {};
}

export function errorFrame(type: string, message: string): Frame {
  return frame('error', { type: 'error', error: { type, message } });
}

function messageShell(id: string, model: string): Record<string, unknown> {
  return { id, type: 'message', role: 'assistant', model };
}

function frame(event: string, data: unknown, output = ''): Frame {
  return { text: `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`, outChars: output.length };
}

function delta(index: number, d: Record<string, unknown>, output: string): Frame {
  return frame('content_block_delta', { type: 'content_block_delta', index, delta: d }, output);
}

/** Splits into at most `n` non-empty pieces on code-point boundaries (never halves an emoji). */
function split(s: string, n: number): string[] {
  const chars = Array.from(s);
  if (chars.length === 0) return [''];
  const size = Math.ceil(chars.length / Math.max(1, n));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}
