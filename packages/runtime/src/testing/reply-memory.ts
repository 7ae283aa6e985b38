// What the fake remembers of its own replies, per instance: the replies with tool calls, to insist
// they come back unchanged (a fake-only strictness: the real API drops a discarded thinking block
// silently, which would hide a client that throws thinking away), and the replies that paused
// (pause_turn), which are the one assistant message a request may end with.
import { canonicalJson } from './canonical-json.js';
import { isRecord } from './token-estimate.js';

type Block = Record<string, unknown>;

export class ReplyMemory {
  /** tool_use id to the content of the assistant message that carried it, as sent. */
  readonly #byToolUseId = new Map<string, readonly unknown[]>();
  /** Canonical JSON of the contents of replies that stopped with pause_turn. */
  readonly #paused = new Set<string>();

  /**
   * Called once a reply has gone out whole, with the assistant message as the client should keep
   * it (for a continuation, the paused content followed by the new blocks). Replies without tool
   * calls are not kept: a client may keep an interrupted or final answer cut short.
   */
  remember(content: readonly unknown[], stopReason: string): void {
    if (stopReason === 'pause_turn') this.#paused.add(canonicalJson(content));
    for (const b of content) {
      if (isRecord(b) && b.type === 'tool_use' && typeof b.id === 'string') this.#byToolUseId.set(b.id, content);
    }
  }

  /** The message is a paused reply sent back to continue it. */
  isContinuation(message: unknown): boolean {
    return isRecord(message) && this.#paused.has(canonicalJson(blocksOf(message.content)));
  }

  /** The first assistant message with a remembered tool call whose content is not the reply as sent. */
  checkEchoes(messages: readonly unknown[]): string | undefined {
    for (const [i, m] of messages.entries()) {
      if (!isRecord(m) || m.role !== 'assistant') continue;
      const content = blocksOf(m.content);
      const sent = this.#sentWith(content);
      if (sent === undefined || canonicalJson(sent) === canonicalJson(content)) continue;
      return (
        `messages.${i}: this assistant turn differs from the reply the API gave (${difference(sent, content)}); ` +
        'send every assistant turn back unchanged, thinking blocks included'
      );
    }
    return undefined;
  }

  #sentWith(content: readonly unknown[]): readonly unknown[] | undefined {
    for (const b of content) {
      const sent = isRecord(b) && b.type === 'tool_use' && typeof b.id === 'string' ? this.#byToolUseId.get(b.id) : undefined;
      if (sent) return sent;
    }
    return undefined;
  }
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
