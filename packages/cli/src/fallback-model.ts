// --fallback-model: when the session's model is overloaded again and again, or the API does not
// know it, the session moves to the fallback model for the rest of its run, as Claude Code's does.
import { ModelError, type CompletionRequest, type ModelProvider, type StreamEvent } from '@infinity-code/runtime';
import type { Effort } from '@infinity-code/runtime/models';
import { effortProblem } from './effort.js';

/** Overloaded answers in a row (one model) before the fallback takes over: Claude Code's count. */
export const OVERLOADS_BEFORE_FALLBACK = 3;

export interface FallbackOptions {
  fallback: string;
  /** The session's model, read per completion (see AgentSession): switched here. */
  model: { current: string };
  /** The session's effort: cleared when the fallback does not accept it. */
  effort: { current: Effort | undefined };
  /** Told once, when the switch is made. */
  onSwitch(from: string, to: string, why: string): void;
}

/**
 * `inner`, watched for the failures that call for the fallback. The switch is made as the failure
 * is seen, before the runtime decides on a retry: the retry then goes to the fallback at once
 * (see CompletionHooks.retryRequest), and so does every later completion of every thread.
 */
export function withFallback(inner: ModelProvider, o: FallbackOptions): ModelProvider {
  let overloads = 0;
  const provider: ModelProvider = {
    name: inner.name,
    async *stream(request: CompletionRequest, signal: AbortSignal): AsyncGenerator<StreamEvent> {
      try {
        for await (const ev of inner.stream(request, signal)) {
          // A reply came: overloads counted so far were not in a row.
          if (ev.type === 'done') overloads = 0;
          yield ev;
        }
      } catch (err) {
        const why = signal.aborted ? undefined : reason(err, request.model, () => ++overloads);
        // Once: a completion of another thread, sent before the switch, may fail the same way.
        if (why !== undefined && request.model !== o.fallback && o.model.current === request.model) {
          o.model.current = o.fallback;
          const effort = o.effort.current;
          if (effort !== undefined && effortProblem(effort, o.fallback) !== undefined) o.effort.current = undefined;
          o.onSwitch(request.model, o.fallback, why);
        }
        throw err;
      }
    },
  };
  if (inner.warm) provider.warm = () => inner.warm?.();
  return provider;
}

/** Why `err` calls for the fallback, or undefined when it doesn't. */
function reason(err: unknown, model: string, countOverload: () => number): string | undefined {
  if (!(err instanceof ModelError)) return undefined;
  if (err.kind === 'overloaded') {
    const n = countOverload();
    return n >= OVERLOADS_BEFORE_FALLBACK ? `${model} was overloaded ${n} times in a row` : undefined;
  }
  if (err.status === 404) return `the model API does not know ${model} (404)`;
  return undefined;
}
