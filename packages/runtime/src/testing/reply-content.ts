// A scripted reply as the blocks the model "said": `content`, or the older text + toolUse shorthand.
import type { FakeReply } from './fake-types.js';
import { textTokens } from './token-estimate.js';

export type ReplyBlock =
  | { type: 'text'; text: string }
  /** `json` is what is streamed; `input` what a non-streaming reply holds. */
  | { type: 'tool_use'; id: string; name: string; input: unknown; json: string };

/** `messageId` seeds the ids of tool calls the script left without one. */
export function replyBlocks(reply: FakeReply, messageId: string): ReplyBlock[] {
  if (reply.content !== undefined) {
    if (reply.text !== undefined || reply.toolUse !== undefined || reply.rawInputJson !== undefined) {
      throw new Error('a FakeReply has either content or text/toolUse/rawInputJson, not both');
    }
    return reply.content.map((b, i) =>
      b.type === 'text'
        ? { type: 'text', text: b.text }
        : {
            type: 'tool_use',
            id: b.id ?? `toolu_${messageId}_${i}`,
            name: b.name,
            input: b.input,
            json: b.rawInputJson ?? JSON.stringify(b.input ?? {}),
          },
    );
  }
  const out: ReplyBlock[] = [];
  if (reply.text !== undefined) out.push({ type: 'text', text: reply.text });
  if (reply.toolUse || reply.rawInputJson !== undefined) {
    out.push({
      type: 'tool_use',
      id: reply.toolUse?.id ?? `toolu_${messageId}`,
      name: reply.toolUse?.name ?? 'fake_tool',
      input: reply.toolUse?.input ?? {},
      json: reply.rawInputJson ?? JSON.stringify(reply.toolUse?.input ?? {}),
    });
  }
  return out;
}

export function stopReasonOf(reply: FakeReply, blocks: readonly ReplyBlock[]): string {
  return reply.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
}

/** Output tokens of a reply: its text and tool JSON; never 0, as a real reply costs at least one. */
export function outputTokens(blocks: readonly ReplyBlock[]): number {
  return Math.max(1, blocks.reduce((n, b) => n + textTokens(b.type === 'text' ? b.text : b.json), 0));
}
