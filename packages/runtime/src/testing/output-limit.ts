// max_tokens as the real API applies it: a hard cap on the whole output, thinking included. The
// reply stops where the budget runs out, mid-text or mid-JSON, and says so with stop_reason
// max_tokens; a tool call cut that way has input that no longer parses.
import { outputText, parsedOr, type ReplyBlock } from './reply-content.js';
import { textTokens } from './token-estimate.js';

export interface LimitedReply {
  blocks: ReplyBlock[];
  /** The budget ran out: stop_reason is max_tokens. */
  cut: boolean;
}

export function limitOutput(blocks: readonly ReplyBlock[], budget: number): LimitedReply {
  const out: ReplyBlock[] = [];
  let used = 0;
  for (const b of blocks) {
    // With the budget spent nothing more is started, not even an empty thinking block.
    if (used >= budget) return { blocks: out, cut: true };
    const cost = textTokens(outputText(b));
    if (used + cost <= budget) {
      out.push(b);
      used += cost;
      continue;
    }
    const part = cutBlock(b, budget - used);
    if (part) out.push(part);
    return { blocks: out, cut: true };
  }
  return { blocks: out, cut: false };
}

/** The block as far as `tokens` of its output got; a redacted block arrives whole or not at all. */
function cutBlock(b: ReplyBlock, tokens: number): ReplyBlock | undefined {
  switch (b.type) {
    case 'text':
      return { ...b, text: head(b.text, tokens) };
    case 'tool_use': {
      const json = head(b.json, tokens);
      return { ...b, json, input: parsedOr(json, {}) };
    }
    case 'thinking': {
      const written = head(b.written, tokens);
      // Shown text is either the written text or nothing (the display hides it).
      return { ...b, written, thinking: b.thinking === '' ? '' : head(b.thinking, tokens) };
    }
    case 'redacted_thinking':
      return undefined;
  }
}

/** The first `tokens` tokens' worth of characters (four a token), never halving a surrogate pair. */
function head(s: string, tokens: number): string {
  let out = '';
  for (const ch of s) {
    if (out.length + ch.length > tokens * 4) break;
    out += ch;
  }
  return out;
}
