// Where thinking goes in a reply on the 5.x models. Since Sonnet/Opus 5.5 the prose a model writes
// before a tool call comes back as a thinking block (text only when the display returns it), and
// every adaptive reply opens with a thinking block; brains keep scripting plain text and tool
// calls, and this turns them into what the real API would send.
import type { ReplyBlock } from './reply-content.js';
import type { ThinkingMode } from './thinking-mode.js';

/** `reasoning`: the script's `thinking`, the model's own thinking before it writes anything. */
export function shapeThinking(blocks: readonly ReplyBlock[], mode: ThinkingMode, reasoning?: string): ReplyBlock[] {
  if (mode.kind === 'none') return [...blocks];
  const lastCall = blocks.findLastIndex((b) => b.type === 'tool_use');
  const isNote = (b: ReplyBlock, i: number): b is Extract<ReplyBlock, { type: 'text' }> => b.type === 'text' && i < lastCall;
  if (mode.kind === 'between_tools') {
    // No thinking up front; the notes between calls come back with their text.
    return blocks.map((b, i) => (isNote(b, i) ? thinking(b.text, b.text) : b));
  }
  const shaped = blocks.map((b, i): ReplyBlock => {
    if (isNote(b, i)) return thinking(mode.showNotes ? b.text : '', b.text);
    if (b.type === 'thinking') return thinking(mode.showReasoning ? b.written : '', b.written);
    return b;
  });
  const opensWithThinking = shaped[0]?.type === 'thinking' || shaped[0]?.type === 'redacted_thinking';
  if (reasoning === undefined && opensWithThinking) return shaped;
  return [thinking(mode.showReasoning ? (reasoning ?? '') : '', reasoning ?? ''), ...shaped];
}

function thinking(shown: string, written: string): ReplyBlock {
  return { type: 'thinking', thinking: shown, written, signature: '' };
}
