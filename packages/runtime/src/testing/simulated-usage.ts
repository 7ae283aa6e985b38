// The usage a reply reports: input split by the prompt cache simulation (or all uncached without
// it), the output as counted, and any field the script gives in place of the simulated one.
import type { FakeUsage } from './fake-types.js';
import type { PromptCache } from './prompt-cache.js';
import { prefixBlocks } from './prompt-prefix.js';

/** `prompt` is the request as the model sees it (dropped thinking blocks taken out). */
export function simulatedUsage(
  cache: PromptCache | undefined,
  prompt: Record<string, unknown>,
  now: number,
  output: number,
  scripted: FakeUsage = {},
): Required<FakeUsage> {
  const input = cache
    ? cache.process(prompt, now)
    : {
        input_tokens: prefixBlocks(prompt).reduce((n, b) => n + b.tokens, 0),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      };
  const { cache_creation: scriptedCreation, ...counts } = scripted;
  const usage: Required<FakeUsage> = {
    input_tokens: input.input_tokens,
    output_tokens: output,
    cache_creation_input_tokens: input.cache_creation_input_tokens,
    cache_read_input_tokens: input.cache_read_input_tokens,
    cache_creation: input.cache_creation,
  };
  for (const [k, v] of Object.entries(counts) as [keyof typeof counts, number | undefined][]) {
    if (v !== undefined) usage[k] = v;
  }
  // A scripted write total without its split counts as a 5-minute write, so the two agree.
  if (scriptedCreation) usage.cache_creation = scriptedCreation;
  else if (counts.cache_creation_input_tokens !== undefined) {
    usage.cache_creation = { ephemeral_5m_input_tokens: counts.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 };
  }
  return usage;
}
