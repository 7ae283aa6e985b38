import { answer, isComplete, resultBlock, resultsMessage } from './batch.js';
import type { EventBus } from './events.js';
import { asResultContent } from './history.js';
import type { InputMessage } from './input.js';
import type { HistoryMessage, Usage } from './messages.js';
import { addUsage, ZERO_USAGE } from './messages.js';
import type { Preparer } from './prepare.js';
import type { CompletionUsage, LoadedThread, PendingCall, RuntimeStore, Subscription } from './store.js';
import type { ToolOutput } from './tool.js';

/** The uncommitted part of a slice, and how it becomes durable (one transaction per commit). */
export class Turn {
  private pending: HistoryMessage[];
  private consumed: string[];
  private usage: Usage = ZERO_USAGE;
  /** Completions since the last commit, each with its model (stored with the commit). */
  private completionUsage: CompletionUsage[] = [];
  private contextTokens: number;
  private stateChanged = true;
  completions = 0;
  sliceCompletions = 0;
  /** Completions in this slice, one after the other, whose tool call failed (see Limits). */
  failedInARow = 0;
  /** Text answers cut by the output limit and continued, in a row. */
  continuations = 0;
  /** Replies that paused their turn (pause_turn), in a row. */
  pauses = 0;
  /** The next completion goes on with a reply the output limit cut. */
  continuing = false;
  /** This slice resumed a thread the full context stopped, after its compaction. */
  afterCompaction = false;
  sliceUsage: Usage = ZERO_USAGE;
  batch: PendingCall[];
  subscriptions: Subscription[];
  hasDeferred: boolean;
  compacting: boolean;
  readonly enqueue: InputMessage[] = [];

  constructor(
    private readonly store: RuntimeStore,
    private readonly thread: LoadedThread,
    prep: Preparer,
  ) {
    const r = thread.record;
    this.pending = prep.append;
    this.consumed = prep.consumed;
    this.batch = prep.batch;
    this.subscriptions = prep.subscriptions;
    this.hasDeferred = prep.deferred.length > 0;
    this.compacting = r.compacting;
    this.contextTokens = r.contextTokens;
    this.stateChanged =
      prep.batch !== r.batch ||
      prep.subscriptions !== r.subscriptions ||
      this.hasDeferred !== r.hasDeferred;
  }

  get dirty(): boolean {
    return (
      this.pending.length > 0 ||
      this.consumed.length > 0 ||
      this.enqueue.length > 0 ||
      this.stateChanged ||
      this.batch !== this.thread.record.batch ||
      this.compacting !== this.thread.record.compacting
    );
  }

  view(): HistoryMessage[] {
    return this.pending.length === 0 ? this.thread.history : this.thread.history.concat(this.pending);
  }

  push(m: HistoryMessage): void {
    this.pending.push(m);
  }

  /** Answers a call of the batch (a synchronous call's output, or an error the model must fix). */
  answer(bus: EventBus, callId: string, output: ToolOutput): void {
    const content = asResultContent(output.content);
    const isError = output.isError === true;
    this.batch = answer(this.batch, callId, resultBlock(callId, content, isError));
    bus.emit({
      type: 'tool-result',
      threadId: this.thread.record.id,
      toolUseId: callId,
      content,
      isError,
      ...(output.display ? { display: output.display } : {}),
    });
  }

  /** When every call of the batch is answered, its results join history (true if so). */
  closeBatchIfComplete(): boolean {
    if (this.batch.length === 0 || !isComplete(this.batch)) return false;
    this.pending.push(resultsMessage(this.batch));
    this.batch = [];
    return true;
  }

  recordCompletion(u: Usage, model: string): void {
    this.completionUsage.push({ model, usage: u });
    this.completions++;
    this.sliceCompletions++;
    this.usage = addUsage(this.usage, u);
    this.sliceUsage = addUsage(this.sliceUsage, u);
    const context = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    if (context > 0) this.contextTokens = context;
  }

  async commit(bus: EventBus): Promise<void> {
    const append = this.pending;
    await this.store.commit({
      threadId: this.thread.record.id,
      append,
      consumed: this.consumed,
      batch: this.batch,
      subscriptions: this.subscriptions,
      hasDeferred: this.hasDeferred,
      compacting: this.compacting,
      enqueue: this.enqueue.splice(0),
      completions: this.completions,
      usage: this.usage,
      contextTokens: this.contextTokens,
      completionUsage: this.completionUsage,
    });
    // Mirror the committed state into the caller's copy.
    const r = this.thread.record;
    for (const m of append) this.thread.history.push(m);
    r.messageCount += append.length;
    r.batch = this.batch;
    r.subscriptions = this.subscriptions;
    r.hasDeferred = this.hasDeferred;
    r.compacting = this.compacting;
    r.completions += this.completions;
    r.usage = addUsage(r.usage, this.usage);
    r.contextTokens = this.contextTokens;
    this.pending = [];
    this.consumed = [];
    this.usage = ZERO_USAGE;
    this.completions = 0;
    this.completionUsage = [];
    this.stateChanged = false;
    bus.emit({ type: 'turn-committed', threadId: r.id, messages: append.length });
  }
}
