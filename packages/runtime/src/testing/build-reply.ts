// The reply a script describes, as the request's model would send it: thinking shaped by the
// model and the request's thinking settings, cut at max_tokens, signed for where it will sit.
import { modelInfo } from '../models.js';
import { prefixContext } from './conversation-prefix.js';
import type { FakeReply, FakeUsage } from './fake-types.js';
import { limitOutput } from './output-limit.js';
import { outputTokens, scriptedBlocks, sentBlock, stopReasonOf } from './reply-content.js';
import type { ReplyShape } from './reply-frames.js';
import { signReply } from './reply-signing.js';
import { shapeThinking } from './reply-thinking.js';
import { BETA_THINKING_BINDING_CONTROLS, hasBeta, type RequestHeaders } from './request-headers.js';
import { withoutDropped, type DroppedBlock } from './thinking-binding.js';
import { thinkingMode } from './thinking-mode.js';
import { isRecord } from './token-estimate.js';

export interface ReplyInput {
  /** A request that passed validation (model a string, messages a list), or strict is off. */
  body: Record<string, unknown>;
  headers: RequestHeaders;
  script: FakeReply;
  id: string;
  dropped: readonly DroppedBlock[];
  /** Usage for the prompt as the model sees it and the output tokens counted. */
  usage: (prompt: Record<string, unknown>, outputTokens: number) => Required<FakeUsage>;
}

export interface BuiltReply {
  shape: ReplyShape;
  /**
   * The assistant message as the client should send it back (a continuation's paused content
   * first), for the fake's memory; undefined when a tool call was cut and cannot come back as sent.
   */
  sent: unknown[] | undefined;
}

export function buildReply({ body, headers, script, id, dropped, usage }: ReplyInput): BuiltReply {
  const model = String(body.model);
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  // A request ending in an assistant message (a pause_turn continuation) extends that message.
  const last: unknown = messages.at(-1);
  const continuing = isRecord(last) && last.role === 'assistant';
  const continued = continuing ? contentOf(last.content) : [];

  const shaped = shapeThinking(scriptedBlocks(script, id), thinkingMode(body, headers), script.thinking);
  const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : Infinity;
  const limited = limitOutput(shaped, Math.min(maxTokens, script.cutAtOutputTokens ?? Infinity));
  const ctx = prefixContext(body, continuing ? messages.length - 1 : messages.length);
  const blocks = signReply(limited.blocks, modelInfo(model)?.id ?? model, ctx, continued);
  const stopReason = limited.cut ? 'max_tokens' : stopReasonOf(script, blocks);

  const shape: ReplyShape = {
    id,
    model,
    blocks,
    stopReason,
    stopSequence: stopReason === 'stop_sequence' ? (script.stopSequence ?? null) : null,
    stopDetails:
      stopReason === 'refusal'
        ? { type: 'refusal', category: script.stopDetails?.category ?? null, explanation: script.stopDetails?.explanation ?? null }
        : null,
    usage: usage(withoutDropped(body, dropped), outputTokens(blocks, maxTokens)),
    chunks: script.chunks ?? 2,
    // The real API reports dropped blocks only to requests that opted into the binding controls.
    ...(hasBeta(headers, BETA_THINKING_BINDING_CONTROLS) && {
      inputTransformations: dropped.map((d) => ({ type: 'thinking_dropped', path: d.path, reason: d.reason })),
    }),
  };
  const whole = blocks.every((b) => b.type !== 'tool_use' || isObjectJson(b.json));
  return { shape, sent: whole ? [...continued, ...blocks.map(sentBlock)] : undefined };
}

function contentOf(content: unknown): unknown[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}

/**
 * Whether a call's input is a JSON object: the only input a client can send back (the real API
 * never gives another; a script may, to test the client).
 */
function isObjectJson(json: string): boolean {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
