// Signs a reply's thinking blocks where they will sit in the conversation: after the request's
// messages (or inside the assistant message a continuation extends) and after the reply's earlier
// blocks, so a later request can only replay them in that very place.
import { prefixDigest, type PrefixContext } from './conversation-prefix.js';
import { sentBlock, type ReplyBlock } from './reply-content.js';
import { signRedacted, signThinking } from './thinking-signature.js';

/**
 * `continued`: the content of the assistant message the reply extends (a pause_turn continuation
 * or a prefill), empty for a reply that starts a new message.
 */
export function signReply(blocks: readonly ReplyBlock[], model: string, ctx: PrefixContext, continued: readonly unknown[]): ReplyBlock[] {
  const before: unknown[] = [...continued];
  return blocks.map((b) => {
    let signed = b;
    if (b.type === 'thinking') signed = { ...b, signature: signThinking(model, prefixDigest(ctx, before), b.thinking) };
    if (b.type === 'redacted_thinking') signed = { ...b, data: signRedacted(model, prefixDigest(ctx, before), b.payload) };
    before.push(sentBlock(signed));
    return signed;
  });
}
