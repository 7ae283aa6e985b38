// A scripted reply as the blocks the model "wrote": `content`, or the older text + toolUse
// shorthand. Thinking is shaped in reply-thinking.ts, cut in output-limit.ts and signed in
// reply-signing.ts; this module holds the block type they pass along and what each block costs.
import type { FakeReply } from './fake-types.js';
import { textTokens } from './token-estimate.js';

export type ReplyBlock =
  | { type: 'text'; text: string }
  /** `json` is what is streamed; `input` what a non-streaming reply holds (json parsed, when it parses). */
  | { type: 'tool_use'; id: string; name: string; input: unknown; json: string }
  /**
   * `thinking` is what is sent; `written` the thinking behind it, which output tokens count even
   * when the display hides it. `signature` is empty until the block is signed.
   */
  | { type: 'thinking'; thinking: string; written: string; signature: string }
  /** `payload` is what the script gave; `data` the opaque value sent, empty until signed. */
  | { type: 'redacted_thinking'; payload: string; data: string };

/** `messageId` seeds the ids of tool calls the script left without one. */
export function scriptedBlocks(reply: FakeReply, messageId: string): ReplyBlock[] {
  if (reply.content !== undefined) {
    if (reply.text !== undefined || reply.toolUse !== undefined || reply.rawInputJson !== undefined) {
      throw new Error('a FakeReply has either content or text/toolUse/rawInputJson, not both');
    }
    return reply.content.map((b, i): ReplyBlock => {
      switch (b.type) {
        case 'text':
          return { type: 'text', text: b.text };
        case 'thinking':
          return { type: 'thinking', thinking: b.thinking, written: b.thinking, signature: '' };
        case 'redacted_thinking':
          return { type: 'redacted_thinking', payload: b.data ?? `redacted thinking ${messageId}.${i}`, data: '' };
        case 'tool_use':
          return toolUse(b.id ?? `toolu_${messageId}_${i}`, b.name, b.input, b.rawInputJson);
      }
    });
  }
  const out: ReplyBlock[] = [];
  if (reply.text !== undefined) out.push({ type: 'text', text: reply.text });
  if (reply.toolUse || reply.rawInputJson !== undefined) {
    out.push(toolUse(reply.toolUse?.id ?? `toolu_${messageId}`, reply.toolUse?.name ?? 'fake_tool', reply.toolUse?.input ?? {}, reply.rawInputJson));
  }
  return out;
}

function toolUse(id: string, name: string, input: unknown, rawJson: string | undefined): ReplyBlock {
  const json = rawJson ?? JSON.stringify(input ?? {});
  return { type: 'tool_use', id, name, input: parsedOr(json, input), json };
}

/** What a client assembles from the streamed JSON, so both reply forms hold the same input. */
export function parsedOr(json: string, fallback: unknown): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return fallback;
  }
}

/** The block as it appears in a reply's `content`, and as a client should send it back. */
export function sentBlock(b: ReplyBlock): Record<string, unknown> {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
    case 'thinking':
      return { type: 'thinking', thinking: b.thinking, signature: b.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: b.data };
  }
}

export function stopReasonOf(reply: FakeReply, blocks: readonly ReplyBlock[]): string {
  return reply.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
}

/** The text a block's output tokens are counted from (thinking by what was written, shown or not). */
export function outputText(b: ReplyBlock): string {
  switch (b.type) {
    case 'text':
      return b.text;
    case 'tool_use':
      return b.json;
    case 'thinking':
      return b.written;
    case 'redacted_thinking':
      return b.payload;
  }
}

/** Output tokens of a reply; at least one, as a real reply costs one, unless max_tokens allows none. */
export function outputTokens(blocks: readonly ReplyBlock[], maxTokens = Infinity): number {
  const sum = blocks.reduce((n, b) => n + textTokens(outputText(b)), 0);
  return Math.min(maxTokens, Math.max(1, sum));
}
