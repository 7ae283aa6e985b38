// What the fake remembers of its own replies, per instance: the replies with tool calls, to insist
// they come back unchanged (a fake-only strictness: the real API drops a discarded thinking block
// silently, which would hide a client that throws thinking away), and the replies that paused
// (pause_turn), which are the one assistant message a request may end with.
//
// One exception, the API's own advice for client-side compaction: a turn kept after a summary
// (the conversation before it is no longer what it was answered after) comes back without its
// thinking, which was bound to what the summary replaced. Everything else in it must be unchanged.
import { canonicalJson, digestOf } from './canonical-json.js';
import { prefixContext } from './conversation-prefix.js';
import { isRecord } from './token-estimate.js';

type Block = Record<string, unknown>;

interface Sent {
  content: readonly unknown[];
  /** Digest of the conversation the reply was given after (system, tools, earlier messages). */
  after: string;
}

export class ReplyMemory {
  /** tool_use id to the assistant message that carried it, as sent. */
  readonly #byToolUseId = new Map<string, Sent>();
  /** Canonical JSON of the contents of replies that stopped with pause_turn. */
  readonly #paused = new Set<string>();

  /**
   * Called once a reply has gone out whole, with the assistant message as the client should keep
   * it (for a continuation, the paused content followed by the new blocks) and the request it
   * answered. Replies without tool calls are not kept: a client may keep an interrupted or final
   * answer cut short.
   */
  remember(content: readonly unknown[], stopReason: string, request: Record<string, unknown>): void {
    if (stopReason === 'pause_turn') this.#paused.add(canonicalJson(content));
    const messages = Array.isArray(request.messages) ? request.messages : [];
    // A continuation's paused turn is the reply's own start, not part of what it came after.
    const at = isRecord(messages.at(-1)) && (messages.at(-1) as Block).role === 'assistant' ? messages.length - 1 : messages.length;
    const sent: Sent = { content, after: digestOf(prefixContext(request, at)) };
    for (const b of content) {
      if (isRecord(b) && b.type === 'tool_use' && typeof b.id === 'string') this.#byToolUseId.set(b.id, sent);
    }
  }

  /** The message is a paused reply sent back to continue it. */
  isContinuation(message: unknown): boolean {
    return isRecord(message) && this.#paused.has(canonicalJson(blocksOf(message.content)));
  }

  /** The first assistant message with a remembered tool call whose content is not the reply as sent. */
  checkEchoes(request: Record<string, unknown>): string | undefined {
    const messages: unknown[] = Array.isArray(request.messages) ? request.messages : [];
    for (const [i, m] of messages.entries()) {
      if (!isRecord(m) || m.role !== 'assistant') continue;
      const content = blocksOf(m.content);
      const sent = this.#sentWith(content);
      if (sent === undefined || canonicalJson(sent.content) === canonicalJson(content)) continue;
      if (keptAfterSummary(sent, content, digestOf(prefixContext(request, i)))) continue;
      return (
        `messages.${i}: this assistant turn differs from the reply the API gave (${difference(sent.content, content)}); ` +
        'send every assistant turn back unchanged, thinking blocks included'
      );
    }
    return undefined;
  }

  #sentWith(content: readonly unknown[]): Sent | undefined {
    for (const b of content) {
      const sent = isRecord(b) && b.type === 'tool_use' && typeof b.id === 'string' ? this.#byToolUseId.get(b.id) : undefined;
      if (sent) return sent;
    }
    return undefined;
  }
}

/** The turn lost its thinking and nothing else, and what comes before it was rewritten. */
function keptAfterSummary(sent: Sent, content: readonly unknown[], after: string): boolean {
  if (after === sent.after) return false;
  const unthought = sent.content.filter((b) => !(isRecord(b) && (b.type === 'thinking' || b.type === 'redacted_thinking')));
  return canonicalJson(unthought) === canonicalJson(content);
}

function blocksOf(content: unknown): unknown[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}

/** Where the two contents first part, in words a developer can act on. */
function difference(sent: readonly unknown[], got: readonly unknown[]): string {
  for (let i = 0; i < Math.max(sent.length, got.length); i++) {
    const a = sent[i];
    const b = got[i];
    if (canonicalJson(a) === canonicalJson(b)) continue;
    if (b === undefined) return `content.${i}: the ${typeOf(a)} block is missing`;
    if (a === undefined) return `content.${i}: a ${typeOf(b)} block was added`;
    if (typeOf(a) !== typeOf(b)) return `content.${i}: expected the ${typeOf(a)} block, found a ${typeOf(b)} block`;
    const keys = [...new Set([...Object.keys(a as Block), ...Object.keys(b as Block)])].filter(
      (k) => k !== 'cache_control' && canonicalJson((a as Block)[k]) !== canonicalJson((b as Block)[k]),
    );
    return `content.${i}: the ${typeOf(a)} block's ${keys.map((k) => `\`${k}\``).join(', ')} changed`;
  }
  return 'no difference';
}

function typeOf(block: unknown): string {
  return isRecord(block) && typeof block.type === 'string' ? block.type : 'malformed';
}
