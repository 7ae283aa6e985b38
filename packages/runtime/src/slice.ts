import { runCompletion, type RetryPolicy } from './completion.js';
import { ModelError } from './errors.js';
import type { EventBus, SliceOutcome } from './events.js';
import { asResultContent, toolResultMessage, toRequestMessages } from './history.js';
import type { InputMessage } from './input.js';
import type { ContentBlock, HistoryMessage, Usage } from './messages.js';
import { addUsage, text, ZERO_USAGE } from './messages.js';
import { prepareInputs } from './prepare.js';
import type { ModelProvider } from './provider.js';
import type { LoadedThread, PendingCall, RuntimeStore, ThreadRecord } from './store.js';
import type { ToolOutput } from './tool.js';
import type { ToolRegistry } from './tool-registry.js';

/** What a slice needs; the same for local and step mode. */
export interface SliceDeps {
  store: RuntimeStore;
  provider: ModelProvider;
  tools: ToolRegistry;
  bus: EventBus;
  model(thread: ThreadRecord): string;
  systemPrompt(thread: ThreadRecord): string;
  retry: RetryPolicy;
  maxTokens: number;
  /** Bounds loops of synchronous tools and error corrections inside one slice. */
  maxCompletionsPerSlice: number;
  /** Hands a committed async call to its tool (after marking it dispatched). */
  dispatch(thread: ThreadRecord, call: PendingCall): Promise<void>;
}

export interface SliceOptions {
  signal: AbortSignal;
  /** The inputs came through the durable queue, which already refused duplicate ids. */
  deduplicated: boolean;
}

/**
 * One slice of one thread: prepare inputs, stream completions (looping through synchronous
 * tools), commit, and only then dispatch at most one asynchronous call. `thread` is updated in
 * place after every commit, so a caller may keep it as a cache of the stored state.
 */
export async function runSlice(
  deps: SliceDeps,
  thread: LoadedThread,
  inputs: readonly InputMessage[],
  opts: SliceOptions,
): Promise<SliceOutcome> {
  const { bus, store } = deps;
  const threadId = thread.record.id;
  bus.emit({ type: 'slice-started', threadId, inputs: inputs.length });

  // A call committed but never dispatched (crash between commit and dispatch) goes out first,
  // with its original id.
  const carried = thread.record.pendingCall;
  if (carried && !carried.dispatched) await deps.dispatch(thread.record, carried);

  const processed = opts.deduplicated
    ? new Set<string>()
    : await store.processedIds(threadId, inputs.map((i) => i.id));
  const prep = prepareInputs(thread.record.pendingCall, inputs, processed);
  for (const d of prep.dropped) {
    bus.emit({ type: 'input-dropped', threadId, inputId: d.input.id, reason: d.reason });
  }
  for (const input of prep.accepted) {
    if (input.body.kind === 'tool_result') {
      bus.emit({
        type: 'tool-result',
        threadId,
        toolUseId: input.body.toolUseId,
        content: input.body.content,
        isError: input.body.isError === true,
      });
    } else {
      bus.emit({ type: 'input-accepted', threadId, input });
    }
  }
  for (const call of prep.interrupted) {
    const tool = deps.tools.get(call.name);
    if (tool?.kind === 'async') {
      tool.cancel?.({ threadId, threadStack: thread.record.stack, call });
    }
    bus.emit({ type: 'tool-interrupted', threadId, callId: call.id, reason: 'user' });
  }

  const tx = new Turn(store, thread, prep.append, prep.consumed, prep.pendingCall);
  if (!prep.actionable) {
    if (tx.dirty) await tx.commit(bus);
    return finish(bus, thread, tx, 'skipped');
  }

  let asyncCall: PendingCall | null = null;
  let outcome: SliceOutcome = 'completed';
  const tools = deps.tools.definitions();
  for (;;) {
    if (tx.completions >= deps.maxCompletionsPerSlice) {
      bus.emit({
        type: 'error',
        threadId,
        kind: 'budget',
        message: `Stopped after ${tx.completions} model calls in one step; send a message to continue.`,
      });
      outcome = 'failed';
      break;
    }
    const model = deps.model(thread.record);
    const request = {
      model,
      system: deps.systemPrompt(thread.record),
      messages: toRequestMessages(tx.view()),
      tools,
      maxTokens: deps.maxTokens,
    };
    bus.emit({ type: 'completion-started', threadId, model });
    let result;
    try {
      result = await runCompletion(deps.provider, request, deps.retry, opts.signal, {
        onText: (delta) => bus.emit({ type: 'text-delta', threadId, text: delta }),
        onRetry: ({ attempt, delayMs, error }) =>
          bus.emit({
            type: 'completion-retry',
            threadId,
            attempt,
            delayMs,
            kind: error.kind,
            message: error.message,
          }),
      });
    } catch (err) {
      const e = err instanceof ModelError ? err : new ModelError('other', String(err));
      bus.emit({ type: 'error', threadId, kind: e.kind, message: e.message });
      outcome = 'failed';
      break;
    }
    tx.recordCompletion(result.usage);
    if (result.cancelled) {
      if (result.text) tx.push({ role: 'assistant', content: [text(result.text)] });
      outcome = 'interrupted';
      break;
    }
    const content: ContentBlock[] = [];
    if (result.text) content.push(text(result.text));
    const call = result.toolCall;
    if (call) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
    if (content.length > 0) tx.push({ role: 'assistant', content });
    if (!call) break;

    const resolution = deps.tools.resolve(call);
    const tool = resolution.kind === 'error' ? undefined : resolution.tool;
    const display = tool?.display?.(call.input);
    bus.emit({
      type: 'tool-call',
      threadId,
      call: { id: call.id, name: call.name, input: call.input },
      sync: resolution.kind !== 'async',
      ...(display === undefined ? {} : { display }),
    });
    if (resolution.kind === 'error') {
      tx.pushResult(bus, call.id, { content: resolution.message, isError: true });
      continue;
    }
    if (resolution.kind === 'sync') {
      // Synchronous tools may read the store (spawning a thread inherits history up to this
      // call), so what came before them is committed first.
      await tx.commit(bus);
      let output: ToolOutput;
      try {
        output = await resolution.tool.execute(resolution.input, {
          threadId,
          threadStack: thread.record.stack,
          call: { id: call.id, name: call.name, input: resolution.input },
        });
      } catch (err) {
        output = { content: `Error: ${(err as Error).message ?? String(err)}`, isError: true };
      }
      tx.pushResult(bus, call.id, output);
      continue;
    }
    asyncCall = { id: call.id, name: call.name, input: resolution.input, dispatched: false };
    tx.pendingCall = asyncCall;
    outcome = 'awaiting-tool';
    break;
  }

  await tx.commit(bus);
  // Dispatch strictly after the commit: a crash before this line leaves an undispatched call that
  // the next start dispatches, a crash after it leaves a dispatched one that is never re-run.
  if (asyncCall) await deps.dispatch(thread.record, asyncCall);
  return finish(bus, thread, tx, outcome);
}

function finish(bus: EventBus, thread: LoadedThread, tx: Turn, outcome: SliceOutcome): SliceOutcome {
  bus.emit({
    type: 'slice-finished',
    threadId: thread.record.id,
    outcome,
    usage: tx.sliceUsage,
    completions: tx.sliceCompletions,
    contextTokens: thread.record.contextTokens,
  });
  return outcome;
}

/** The uncommitted part of a slice, and how it becomes durable. */
class Turn {
  private pending: HistoryMessage[];
  private consumed: string[];
  private usage: Usage = ZERO_USAGE;
  completions = 0;
  sliceCompletions = 0;
  sliceUsage: Usage = ZERO_USAGE;
  private contextTokens: number;
  private callChanged: boolean;

  constructor(
    private readonly store: RuntimeStore,
    private readonly thread: LoadedThread,
    append: HistoryMessage[],
    consumed: string[],
    public pendingCall: PendingCall | null,
  ) {
    this.pending = append;
    this.consumed = consumed;
    this.contextTokens = thread.record.contextTokens;
    this.callChanged = pendingCall !== thread.record.pendingCall;
  }

  get dirty(): boolean {
    return this.pending.length > 0 || this.consumed.length > 0 || this.callChanged;
  }

  view(): HistoryMessage[] {
    return this.pending.length === 0 ? this.thread.history : this.thread.history.concat(this.pending);
  }

  push(m: HistoryMessage): void {
    this.pending.push(m);
  }

  pushResult(bus: EventBus, callId: string, output: ToolOutput): void {
    const content = asResultContent(output.content);
    const isError = output.isError === true;
    this.pending.push(toolResultMessage(callId, content, isError));
    bus.emit({ type: 'tool-result', threadId: this.thread.record.id, toolUseId: callId, content, isError });
  }

  recordCompletion(u: Usage): void {
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
      pendingCall: this.pendingCall,
      completions: this.completions,
      usage: this.usage,
      contextTokens: this.contextTokens,
    });
    // Mirror the committed state into the caller's copy.
    const r = this.thread.record;
    for (const m of append) this.thread.history.push(m);
    r.messageCount += append.length;
    r.pendingCall = this.pendingCall;
    r.completions += this.completions;
    r.usage = addUsage(r.usage, this.usage);
    r.contextTokens = this.contextTokens;
    this.pending = [];
    this.consumed = [];
    this.usage = ZERO_USAGE;
    this.completions = 0;
    this.callChanged = false;
    bus.emit({ type: 'turn-committed', threadId: r.id, messages: append.length });
  }
}
