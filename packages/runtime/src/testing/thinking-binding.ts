// The preserved-thinking checks on the thinking blocks a request sends back (models with
// `preservedThinking`): a signature the fake cannot verify is a 400; a block another model wrote
// is dropped without a word; a block written in a different conversation is a 400, or dropped
// when the request opts into `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`.
import { modelInfo } from '../models.js';
import { prefixContext, prefixDigest } from './conversation-prefix.js';
import { readRedactedData, readThinkingSignature } from './thinking-signature.js';
import { isRecord } from './token-estimate.js';

export type DropReason = 'model_binding_mismatch' | 'prefix_binding_mismatch';

/** A block the API left out of the prompt; `path` is `messages.N.content.M` of the request. */
export interface DroppedBlock {
  path: string;
  reason: DropReason;
}

export type BindingOutcome = { error: string } | { dropped: DroppedBlock[] };

const HAIKU_5_5 = 'claude-haiku-5-5';
/** Blocks a model reads besides its own (and Haiku 5.5's, which every model reads). */
const ALSO_READS: Readonly<Record<string, readonly string[]>> = {
  'claude-fable-5-1': ['claude-opus-5', 'claude-opus-5-5'],
};

export function checkThinkingBinding(body: Record<string, unknown>): BindingOutcome {
  const model = typeof body.model === 'string' ? modelInfo(body.model) : undefined;
  if (!model?.preservedThinking || !Array.isArray(body.messages)) return { dropped: [] };
  const binding = isRecord(body.thinking) && isRecord(body.thinking.block_binding) ? body.thinking.block_binding : {};
  const dropOnMismatch = binding.prefix_mismatch_behavior === 'drop_block';
  const dropped: DroppedBlock[] = [];
  for (const [i, m] of body.messages.entries()) {
    if (!isRecord(m) || m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    const content: unknown[] = m.content;
    for (const [j, b] of content.entries()) {
      if (!isRecord(b) || (b.type !== 'thinking' && b.type !== 'redacted_thinking')) continue;
      const path = `messages.${i}.content.${j}`;
      const facts = b.type === 'thinking' ? readThinkingSignature(b.signature, b.thinking) : readRedactedData(b.data);
      // No "bound" sentence here: drop_block cannot help a block whose signature is broken.
      if (!facts) return { error: `${path}: Invalid 'signature' in 'thinking' block.` };
      if (!canRead(model.id, facts.model)) {
        dropped.push({ path, reason: 'model_binding_mismatch' });
        continue;
      }
      if (facts.prefix === prefixDigest(prefixContext(body, i), content.slice(0, j))) continue;
      if (!dropOnMismatch) {
        return {
          error:
            `${path}: Invalid 'signature' in 'thinking' block. The block is bound to a different conversation. ` +
            `Remove the block, or set 'thinking.block_binding.prefix_mismatch_behavior' to "drop_block".`,
        };
      }
      dropped.push({ path, reason: 'prefix_binding_mismatch' });
    }
  }
  return { dropped };
}

function canRead(reader: string, writer: string): boolean {
  if (reader === writer || writer === HAIKU_5_5) return true;
  return reader !== HAIKU_5_5 && (ALSO_READS[reader] ?? []).includes(writer);
}

/** The request as the model sees it: the dropped blocks taken out (they are not billed either). */
export function withoutDropped(body: Record<string, unknown>, dropped: readonly DroppedBlock[]): Record<string, unknown> {
  if (dropped.length === 0 || !Array.isArray(body.messages)) return body;
  const gone = new Set(dropped.map((d) => d.path));
  const messages = body.messages.map((m: unknown, i) =>
    isRecord(m) && Array.isArray(m.content)
      ? { ...m, content: (m.content as unknown[]).filter((_, j) => !gone.has(`messages.${i}.content.${j}`)) }
      : m,
  );
  return { ...body, messages };
}
