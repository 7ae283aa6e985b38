import { setTimeout as sleep } from 'node:timers/promises';
import { ModelError } from './errors.js';
import type { ReplyBlock, TextBlock, ToolUseBlock, Usage } from './messages.js';
import { ZERO_USAGE } from './messages.js';
import type { CompletionRequest, ModelProvider, StopDetails } from './provider.js';

export interface RetryPolicy {
  /** Retries after the first attempt before the error is final. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Nothing at all from the API (no response, no byte of one) this long after the request: the
   * attempt is abandoned as a stalled stream and retried (see stallRetries).
   */
  initTimeoutMs: number;
  /**
   * Nothing at all from the API for this long once it answered: the stream stalled, and the
   * attempt is abandoned and retried. Anything counts, keep-alive pings included: a model that
   * thinks for minutes still sends them, so only a dead connection or a hung API goes this quiet.
   */
  stallTimeoutMs: number;
  /**
   * Stalled attempts retried per completion, at most, whatever maxRetries allows: each costs a
   * whole timeout of waiting, and an API that hangs once mostly hangs again, so the user hears
   * a clear failure within a minute rather than after many silent minutes.
   */
  stallRetries: number;
  /**
   * Retries of an 'unreachable' error (an API never reached: refused, unresolvable, TLS failed),
   * a quarter of the base delay doubling each time: a server that is still starting gets a
   * moment, a wrong address fails fast.
   */
  unreachableRetries: number;
  /** ... and only while the completion has not been trying for longer than this. */
  unreachableBudgetMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 8,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  initTimeoutMs: 30_000,
  stallTimeoutMs: 30_000,
  stallRetries: 1,
  // 0.25 s, 0.5 s and 1 s apart: under 2 s in all when each attempt fails at once (a refused
  // connection); when each is slow (a DNS lookup timing out), the budget stops them sooner.
  unreachableRetries: 3,
  unreachableBudgetMs: 4_000,
};

export interface CompletionToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  inputError?: string;
}

export interface CompletionOutcome {
  cancelled: boolean;
  /**
   * The reply as the model gave it: thinking, text and tool calls, in order, each block as it
   * came (a cancelled one: the finished thinking and the text so far, no calls).
   */
  content: Array<ReplyBlock | ToolUseBlock>;
  /** The reply's tool calls, in order. */
  toolCalls: CompletionToolCall[];
  usage: Usage;
  stopReason: string | null;
  stopDetails?: StopDetails;
  /** The model that gave the reply: a retry may have gone to another (see CompletionHooks.retryRequest). */
  model: string;
}

export interface CompletionHooks {
  onText(delta: string): void;
  /** Thinking text as it streams; '' when a thinking block starts (it may stay empty). */
  onThinking?(delta: string): void;
  /** The model began writing a tool call (its input still streams; the call may yet fail to parse). */
  onToolStart?(call: { id: string; name: string }): void;
  onRetry(info: { attempt: number; delayMs: number; error: ModelError }): void;
  /**
   * The request a retry sends, from the one that failed: a model switched meanwhile (a fallback
   * taken when the model is overloaded) applies from the next attempt. Unset: the same request.
   * Another model may answer what this one could not, so a failure is then retried at once,
   * whatever it was.
   */
  retryRequest?(failed: CompletionRequest): CompletionRequest;
  /**
   * The API has sent nothing since `since` (epoch ms) for SILENCE_NOTICE_MS (or half the
   * timeout, if shorter); null once something arrives again or the attempt ends. For displays.
   */
  onSilence?(since: number | null): void;
}

/** How long the stream may be quiet before a display hears of it (see CompletionHooks.onSilence). */
export const SILENCE_NOTICE_MS = 5_000;

/** Stalled-stream errors, told apart from the other timeouts for their own retry budget. */
const stalls = new WeakSet<ModelError>();

/**
 * Step 4 of a slice: stream one completion. Text is buffered here and only returned whole; on a
 * transient failure the buffer is discarded and the request retried with backoff. Cancellation
 * (the thread was interrupted) returns what streamed so far with `cancelled` set.
 */
export async function runCompletion(
  provider: ModelProvider,
  request: CompletionRequest,
  policy: RetryPolicy,
  signal: AbortSignal,
  hooks: CompletionHooks,
): Promise<CompletionOutcome> {
  const started = Date.now();
  let unreachable = 0;
  let stalled = 0;
  let current = request;
  for (let attempt = 0; ; attempt++) {
    try {
      return await attemptOnce(provider, current, policy, signal, hooks);
    } catch (err) {
      if (signal.aborted) return cancelledOutcome([], current.model);
      const error = toModelError(err);
      const next = hooks.retryRequest?.(current);
      if (next !== undefined && next.model !== current.model && attempt <= policy.maxRetries) {
        current = next;
        hooks.onRetry({ attempt: attempt + 1, delayMs: 0, error });
        continue;
      }
      const delayMs =
        error.kind === 'unreachable'
          ? quickDelay(policy, unreachable++, Date.now() - started)
          : error.retryable && attempt < policy.maxRetries && !(stalls.has(error) && stalled++ >= policy.stallRetries)
            ? backoff(policy, attempt, error)
            : undefined;
      if (delayMs === undefined) throw error;
      hooks.onRetry({ attempt: attempt + 1, delayMs, error });
      try {
        await sleep(delayMs, undefined, { signal });
      } catch {
        return cancelledOutcome([], current.model);
      }
      // A model switched while this one waited (its overload made the host fall back) answers the retry.
      current = hooks.retryRequest?.(current) ?? current;
    }
  }
}

async function attemptOnce(
  provider: ModelProvider,
  request: CompletionRequest,
  policy: RetryPolicy,
  outer: AbortSignal,
  hooks: CompletionHooks,
): Promise<CompletionOutcome> {
  const attempt = new AbortController();
  const onOuterAbort = () => attempt.abort(outer.reason);
  outer.addEventListener('abort', onOuterAbort, { once: true });
  // Liveness is anything from the API: the provider's events and, where it can see them, the
  // bytes under them (pings, a tool call's input as it streams). One timer per running attempt,
  // not one per chunk: it looks at when data last came, and sets itself for the next deadline.
  let last = Date.now();
  let heard = false;
  let silentSaid = false;
  let timedOut = false;
  const limit = (): number => (heard ? policy.stallTimeoutMs : policy.initTimeoutMs);
  const notice = (): number => Math.min(SILENCE_NOTICE_MS, limit() / 2);
  let timer: NodeJS.Timeout;
  const alive = (): void => {
    last = Date.now();
    if (!heard) {
      heard = true;
      // The API answered: the stall timeout applies from now on. Only a shorter one needs the
      // watchdog set sooner (a timer made per completion is garbage on the hot path otherwise).
      if (policy.stallTimeoutMs < policy.initTimeoutMs) {
        clearTimeout(timer);
        timer = setTimeout(watch, notice());
      }
    }
    if (silentSaid) {
      silentSaid = false;
      hooks.onSilence?.(null);
    }
  };
  const watch = (): void => {
    const silent = Date.now() - last;
    if (silent >= limit()) {
      timedOut = true;
      attempt.abort();
      return;
    }
    if (silent >= notice() && !silentSaid) {
      silentSaid = true;
      hooks.onSilence?.(last);
    }
    timer = setTimeout(watch, (silentSaid ? limit() : notice()) - silent);
  };
  timer = setTimeout(watch, notice());

  const reply = new ReplyContent();
  const toolCalls: CompletionToolCall[] = [];
  try {
    for await (const ev of provider.stream(request, attempt.signal, { onData: alive })) {
      alive();
      switch (ev.type) {
        case 'text':
          if (ev.text === '') break;
          reply.text(ev.text);
          hooks.onText(ev.text);
          break;
        case 'thinking':
          hooks.onThinking?.(ev.text);
          break;
        case 'block':
          reply.block(ev.block);
          break;
        case 'tool_use_start':
          hooks.onToolStart?.({ id: ev.id, name: ev.name });
          break;
        case 'tool_use': {
          const call: CompletionToolCall = { id: ev.id, name: ev.name, input: ev.input };
          if (ev.inputError !== undefined) call.inputError = ev.inputError;
          toolCalls.push(call);
          reply.block({ type: 'tool_use', id: ev.id, name: ev.name, input: ev.input });
          break;
        }
        case 'done':
          return {
            cancelled: false,
            content: reply.content(),
            toolCalls,
            usage: ev.usage,
            stopReason: ev.stopReason,
            ...(ev.stopDetails && { stopDetails: ev.stopDetails }),
            model: request.model,
          };
      }
    }
    throw new ModelError('stream_cut', 'The model stream ended before the reply was complete.');
  } catch (err) {
    if (outer.aborted) return cancelledOutcome(reply.content().filter((b) => b.type !== 'tool_use'), request.model);
    if (timedOut) {
      // Said once, by whoever reports the retry (or the final failure): no "retrying" here.
      const error = new ModelError(
        'timeout',
        heard
          ? `The model API stream stalled: nothing arrived for ${seconds(limit())}.`
          : `The model API did not answer: nothing arrived for ${seconds(limit())} after the request.`,
        { cause: err },
      );
      stalls.add(error);
      throw error;
    }
    throw err;
  } finally {
    clearTimeout(timer);
    if (silentSaid) hooks.onSilence?.(null);
    outer.removeEventListener('abort', onOuterAbort);
  }
}

function seconds(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** What streamed before the cancel: no calls, since a call that was never committed never runs. */
function cancelledOutcome(soFar: Array<ReplyBlock | ToolUseBlock>, model: string): CompletionOutcome {
  return { cancelled: true, content: soFar, toolCalls: [], usage: { ...ZERO_USAGE }, stopReason: null, model };
}

/**
 * A reply's blocks in order. A provider that hands over finished blocks (the Anthropic one) has
 * them kept as given: block boundaries are part of what a thinking block's signature is bound
 * to. Text deltas with no finished block (a scripted provider; a cut stream) join into one block.
 */
class ReplyContent {
  readonly #blocks: Array<ReplyBlock | ToolUseBlock> = [];
  /** The text block being streamed, until its finished block replaces it. */
  #streaming: TextBlock | undefined;

  text(delta: string): void {
    if (this.#streaming) this.#streaming.text += delta;
    else this.#blocks.push((this.#streaming = { type: 'text', text: delta }));
  }

  block(b: ReplyBlock | ToolUseBlock): void {
    const streaming = this.#streaming;
    this.#streaming = undefined;
    if (b.type === 'text' && streaming) this.#blocks.splice(this.#blocks.indexOf(streaming), 1);
    // An empty text block is refused when sent back, and says nothing.
    if (b.type === 'text' && b.text === '') return;
    this.#blocks.push(b);
  }

  content(): Array<ReplyBlock | ToolUseBlock> {
    return [...this.#blocks];
  }
}

function toModelError(err: unknown): ModelError {
  if (err instanceof ModelError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ModelError('other', `The model provider failed: ${message}`, { cause: err });
}

/** The delay before quick retry `n` of an unreachable API, or undefined when its budget is spent. */
function quickDelay(policy: RetryPolicy, n: number, elapsedMs: number): number | undefined {
  if (n >= policy.unreachableRetries) return undefined;
  const delayMs = (policy.baseDelayMs / 4) * 2 ** n;
  return elapsedMs + delayMs > policy.unreachableBudgetMs ? undefined : delayMs;
}

function backoff(policy: RetryPolicy, attempt: number, error: ModelError): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, policy.maxDelayMs);
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  // Jitter spreads the retries of many threads hitting the same rate limit.
  return Math.round(exp / 2 + Math.random() * (exp / 2));
}
