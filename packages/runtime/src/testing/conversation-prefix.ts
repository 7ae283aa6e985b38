// What a thinking block is bound to (the preserved-thinking prefix check): the top-level system
// prompt, the tools, every message before the block's message and the blocks before it in its own
// message. The digest must come out the same when the fake signs a reply block and when a later
// request sends that block back, so both sides build it here.
import { digestOf } from './canonical-json.js';
import { isRecord } from './token-estimate.js';

/** The parts of a request that lie before any block of its next assistant message. */
export interface PrefixContext {
  system: unknown[];
  tools: unknown;
  messages: unknown[];
}

/** The context of a block in `messages[messageIndex]` (the messages before it, the request's system and tools). */
export function prefixContext(body: Record<string, unknown>, messageIndex: number): PrefixContext {
  const messages = Array.isArray(body.messages) ? body.messages.slice(0, messageIndex) : [];
  return { system: systemBlocks(body.system), tools: body.tools ?? [], messages: messages.map(normaliseMessage) };
}

/** Digest of the conversation up to a block: the context, then the assistant blocks before it. */
export function prefixDigest(ctx: PrefixContext, blocksBefore: readonly unknown[]): string {
  return digestOf({ system: ctx.system, tools: ctx.tools, messages: ctx.messages, current: { role: 'assistant', content: blocksBefore } });
}

/** A string system prompt and the same text as one block are one prompt. */
function systemBlocks(system: unknown): unknown[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  return Array.isArray(system) ? system : [system];
}

/** A string content and the same text as one block are one message. */
function normaliseMessage(m: unknown): unknown {
  if (!isRecord(m) || typeof m.content !== 'string') return m;
  return { ...m, content: m.content === '' ? [] : [{ type: 'text', text: m.content }] };
}
