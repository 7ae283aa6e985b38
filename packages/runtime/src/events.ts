import type { InputMessage } from './input.js';
import type { ReplyBlock, ResultContent, ToolUseBlock, Usage } from './messages.js';
import type { ModelErrorKind } from './errors.js';
import type { StopDetails } from './provider.js';
import type { ToolCall, ToolDisplay } from './tool.js';
import type { InjectedReport } from './wording.js';

export type SliceOutcome = 'completed' | 'awaiting-tool' | 'skipped' | 'interrupted' | 'failed';

/**
 * The typed stream a UI consumes (TUI and headless printer alike). Observers are called
 * synchronously at the point of emission, after any durable change the event reports.
 */
export type RuntimeEvent =
  | { type: 'input-accepted'; threadId: string; input: InputMessage }
  | { type: 'input-dropped'; threadId: string; inputId: string; reason: 'duplicate' | 'stale' | 'closed' | 'inactive' | 'unknown-thread' }
  | { type: 'input-deferred'; threadId: string; inputIds: string[] }
  | { type: 'slice-started'; threadId: string; inputs: number }
  /**
   * `continues`: this completion goes on with the previous reply, which the output limit cut
   * (its text and this one's are one answer).
   */
  | { type: 'completion-started'; threadId: string; model: string; continues?: true }
  | { type: 'text-delta'; threadId: string; text: string }
  /**
   * The model's thinking as it streams: '' when a thinking block starts (under the `omitted`
   * display it stays empty), then its text: on current models, the progress notes it writes
   * between tool calls.
   */
  | { type: 'thinking-delta'; threadId: string; text: string }
  /**
   * A completion ended (finished, cut or cancelled) and its usage is known; the usage is stored
   * with the slice's next commit. `model` is the model that answered (a retry may have gone to
   * another, see CompletionHooks.retryRequest).
   */
  | {
      type: 'completion-finished';
      threadId: string;
      model: string;
      usage: Usage;
      /** Why the reply ended (the API's stop_reason); null when it was cancelled. */
      stopReason?: string | null;
      /** The reply's blocks in order, as they go into history (a cancelled one: what streamed). */
      content?: ReadonlyArray<ReplyBlock | ToolUseBlock>;
      stopDetails?: StopDetails;
      /** Milliseconds spent on the API for this reply, every attempt's, the waits between them not. */
      durationMs?: number;
    }
  | {
      type: 'completion-retry';
      threadId: string;
      attempt: number;
      delayMs: number;
      kind: ModelErrorKind;
      message: string;
    }
  /**
   * The model API has sent nothing (not even a keep-alive) since `since` (epoch ms) for a few
   * seconds: displays may say so; null once data flows again or the attempt ends. A stream quiet
   * for RetryPolicy.stallTimeoutMs is given up (a `completion-retry`, or the error).
   */
  | { type: 'completion-silence'; threadId: string; since: number | null }
  /**
   * The model began writing a tool call: its input still streams, and the call runs (or is
   * answered with an error) only after the whole reply. For work worth starting early (a child
   * about to report: its diff).
   */
  | { type: 'tool-call-streaming'; threadId: string; callId: string; name: string }
  | {
      type: 'tool-call';
      threadId: string;
      call: ToolCall;
      sync: boolean;
      /** The tool's line for UIs, e.g. `$ npm test`. */
      display?: string;
      /** A wait (sleep): new input ends it, which is what it is for, not an interruption. */
      passive?: true;
    }
  /**
   * The host's permission check (SystemOptions.permit) refused a call: it did not run, and the
   * model gets `reason` as its error result. Emitted right after the call's `tool-call` event.
   */
  | { type: 'tool-denied'; threadId: string; call: ToolCall; reason: string }
  | { type: 'turn-committed'; threadId: string; messages: number }
  | { type: 'tool-dispatched'; threadId: string; callId: string }
  | {
      type: 'tool-result';
      threadId: string;
      toolUseId: string;
      content: ResultContent[];
      isError: boolean;
      /** The call goes on in the background: its output follows as events. */
      subscription?: boolean;
      /** What the tool gave UIs to show of the outcome (absent: show the content). */
      display?: ToolDisplay;
    }
  /** Output of a running call as it happens (UI only: never stored, never seen by the model). */
  | { type: 'tool-progress'; threadId: string; callId: string; text: string; final?: boolean }
  | {
      type: 'tool-interrupted';
      threadId: string;
      callId: string;
      reason: 'user' | 'input' | 'restart';
      /** The call was a wait (sleep) that the input ended: it did its job. */
      passive?: true;
    }
  | {
      type: 'event-injected';
      threadId: string;
      source: 'event' | 'report' | 'parent';
      injectedId: string;
      originalCallId: string;
      content: ResultContent[];
      childThreadId?: string;
      attachment?: unknown;
      /** The subscription's last event (e.g. a background command exited). */
      final?: boolean;
      /** source `report`: the child's report without the framing the model reads. */
      report?: InjectedReport;
      /** source `parent`: the parent's message without the framing the model reads. */
      message?: string;
      /** A report or message on a spawn call: the instructions that child was given. */
      task?: string;
      /** source `event`: what the subscription's tool gave UIs to show of this event. */
      display?: ToolDisplay;
    }
  | {
      type: 'thread-spawned';
      threadId: string;
      childId: string;
      kind: 'child' | 'event' | 'compaction';
      spawnCallId: string;
      /** kind `child`: the instructions its parent gave it. */
      task?: string;
    }
  | { type: 'thread-closed'; threadId: string }
  | { type: 'compaction-started'; threadId: string; childId: string }
  | { type: 'compaction-applied'; threadId: string }
  | {
      type: 'slice-finished';
      threadId: string;
      outcome: SliceOutcome;
      usage: Usage;
      completions: number;
      /** Input tokens of the last completion: how full the context is. */
      contextTokens: number;
      /**
       * Outcome `awaiting-tool`: what the thread waits on. `passive` when every call it waits on
       * is a wait (sleep): any event or message wakes it. `active` when work is under way.
       */
      waiting?: 'passive' | 'active';
    }
  /** `refusal`: the model declined the request (its category and explanation are in the message). */
  | { type: 'error'; threadId: string; kind: ModelErrorKind | 'store' | 'tool' | 'budget' | 'refusal'; message: string };

export type RuntimeEventType = RuntimeEvent['type'];
export type Observer = (event: RuntimeEvent) => void;

/** A set of observers; one per system, not per thread, so idle threads cost nothing here. */
export class EventBus {
  private observers: Observer[] = [];

  subscribe(observer: Observer): () => void {
    this.observers = [...this.observers, observer];
    return () => {
      this.observers = this.observers.filter((o) => o !== observer);
    };
  }

  emit(event: RuntimeEvent): void {
    for (const o of this.observers) {
      try {
        o(event);
      } catch (err) {
        // An observer's bug must not break a slice half-way through; report it and go on.
        process.emitWarning(`runtime observer failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      }
    }
  }
}
