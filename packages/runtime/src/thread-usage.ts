import { addUsage, ZERO_USAGE, type Usage } from './messages.js';
import { UNRECORDED_MODEL, type ThreadKind, type ThreadUsage } from './store.js';

/** A thread's running totals, as its record keeps them. */
export interface ThreadTotals {
  threadId: string;
  kind: ThreadKind;
  completions: number;
  usage: Usage;
}

/** One thread's completions with one model, summed. */
export interface ModelTotals {
  model: string;
  completions: number;
  usage: Usage;
}

/**
 * Per-model entries of each thread, in the threads' order, plus what a thread's totals hold beyond
 * them: stores written before completions were recorded one by one still add up per thread.
 */
export function threadUsage(threads: readonly ThreadTotals[], perModel: ReadonlyMap<string, readonly ModelTotals[]>): ThreadUsage[] {
  const out: ThreadUsage[] = [];
  for (const t of threads) {
    let completions = 0;
    let usage: Usage = ZERO_USAGE;
    for (const m of perModel.get(t.threadId) ?? []) {
      out.push({ threadId: t.threadId, kind: t.kind, model: m.model, completions: m.completions, usage: m.usage });
      completions += m.completions;
      usage = addUsage(usage, m.usage);
    }
    const rest: Usage = {
      input_tokens: Math.max(0, t.usage.input_tokens - usage.input_tokens),
      output_tokens: Math.max(0, t.usage.output_tokens - usage.output_tokens),
      cache_creation_input_tokens: Math.max(0, t.usage.cache_creation_input_tokens - usage.cache_creation_input_tokens),
      cache_read_input_tokens: Math.max(0, t.usage.cache_read_input_tokens - usage.cache_read_input_tokens),
    };
    const restCompletions = Math.max(0, t.completions - completions);
    if (restCompletions > 0 || Object.values(rest).some((n) => n > 0)) {
      out.push({ threadId: t.threadId, kind: t.kind, model: UNRECORDED_MODEL, completions: restCompletions, usage: rest });
    }
  }
  return out;
}
