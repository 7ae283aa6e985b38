// Totals over what a fake answered, for tests and benchmarks that compare prompt strategies.
import type { RecordedRequest } from './fake-types.js';

export interface UsageTotal {
  /** Requests answered with a reply (errors and refusals carry no usage). */
  requests: number;
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export function sumUsage(requests: readonly RecordedRequest[]): UsageTotal {
  const total: UsageTotal = { requests: 0, input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  for (const { usage } of requests) {
    if (!usage) continue;
    total.requests++;
    total.input_tokens += usage.input_tokens;
    total.cache_creation_input_tokens += usage.cache_creation_input_tokens;
    total.cache_read_input_tokens += usage.cache_read_input_tokens;
    total.output_tokens += usage.output_tokens;
  }
  return total;
}
