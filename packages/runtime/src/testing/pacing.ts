// When each part of a reply is due, for the optional latency simulation: nothing until the prompt
// is processed (cost grows with the input not read from cache), then output at a steady rate.
import type { FakeLatency, FakeUsage } from './fake-types.js';

export interface ReplyTiming {
  firstByteMs: number;
  lastByteMs: number;
}

export function replyTiming(latency: FakeLatency, usage: Required<FakeUsage>): ReplyTiming {
  const uncached = usage.input_tokens + usage.cache_creation_input_tokens;
  const firstByteMs = latency.baseMs + latency.msPerUncachedToken * uncached;
  const streamMs = latency.outputTokensPerSecond > 0 ? (usage.output_tokens * 1000) / latency.outputTokensPerSecond : 0;
  return { firstByteMs, lastByteMs: firstByteMs + streamMs };
}

/**
 * The due time of each frame, given the characters of output each carries: the output share sent
 * so far decides how far between the first and the last byte a frame falls. `totalChars` is that
 * of the whole reply, so a reply cut short keeps the pace it would have had.
 */
export function frameSchedule(timing: ReplyTiming, outChars: readonly number[], totalChars: number): number[] {
  const span = timing.lastByteMs - timing.firstByteMs;
  let sent = 0;
  return outChars.map((n, i) => {
    sent += n;
    // A reply without output characters still takes its (minimum) output time, at the very end.
    const share = totalChars > 0 ? sent / totalChars : i === outChars.length - 1 ? 1 : 0;
    return timing.firstByteMs + span * share;
  });
}
