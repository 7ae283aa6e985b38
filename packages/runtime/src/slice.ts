import { runCompletion, type RetryPolicy } from './completion.js';
import { ModelError, SystemClosingError } from './errors.js';
import type { EventBus, SliceOutcome } from './events.js';
import { buildReplyTurn, Turn } from './turn.js';
import { toRequestMessages } from './history.js';
import type { InputMessage } from './input.js';
import { Preparer } from './prepare.js';
import type { ModelProvider } from './provider.js';
import type { RuntimeServices } from './services.js';
import type { LoadedThread, PendingCall, ThreadRecord } from './store.js';
import { finishEphemeral, spawnCompactionThread, spawnEventThread } from './thread-lifecycle.js';
import type { ToolOutput, SyncTool } from './tool.js';

/** What a slice needs; the same for local and step mode. */
export interface SliceDeps extends RuntimeServices {
  provider: ModelProvider;
  model(thread: ThreadRecord): string;
  systemPrompt(thread: ThreadRecord): string;
  retry: RetryPolicy;
  maxTokens: number;
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
  const record = thread.record;
  const threadId = record.id;
  bus.emit({ type: 'slice-started', threadId, inputs: inputs.length });

  // A call committed but never dispatched (a crash between commit and dispatch) goes out first,
  // with its original id. A synchronous one is re-run below (built-ins are idempotent by call id).
  const carried = record.pendingCall;
  if (carried && !carried.dispatched && deps.tools.get(carried.name)?.kind === 'async') {
    await deps.dispatch(record, carried);
  }

  const processed = opts.deduplicated ? new Set<string>() : await store.processedIds(threadId, inputs.map((i) => i.id));
  const prep = new Preparer({
    record,
    history: thread.history,
    isPassive: (name) => deps.tools.isPassive(name),
    processed,
  }).add(inputs);
  if (record.hasDeferred && !prep.activeCallPending) {
    // Inputs that waited behind the call just settled follow it, in arrival order.
    const batch = new Set(inputs.map((i) => i.id));
    prep.add((await store.pendingInputsFor(threadId)).filter((i) => !batch.has(i.id)));
  }
  prep.finish();
  announce(deps, thread, prep);

  const tx = new Turn(store, thread, prep);
  // Inputs from outside the durable queue (step mode) must be stored before they may wait.
  if (!opts.deduplicated) tx.enqueue.push(...prep.deferred);

  // Spawns happen before the commit that consumes their inputs: a crash in between replays the
  // input, and the derived child ids make the replay a no-op.
  for (const t of prep.threaded) await spawnEventThread(deps, thread, t.input, t.event, t.sub);
  if (prep.compaction && !record.compacting && record.kind !== 'compaction') {
    const childId = await spawnCompactionThread(deps, thread, prep.consumed.join(','));
    tx.compacting = true;
    bus.emit({ type: 'compaction-started', threadId, childId });
  }
  if (prep.compactionComplete.length > 0) tx.compacting = false;

  let actionable = prep.actionable;
  if (carried && !carried.dispatched) {
    const tool = deps.tools.get(carried.name);
    if (tool?.kind === 'sync') {
      tx.pendingCall = null;
      // A call that ends the turn (close_thread) ends it now too: no completion after it.
      if ((await runSync(deps, thread, tx, tool, carried)).stop === true) {
        await tx.commit(bus);
        return finish(deps, thread, tx, 'completed');
      }
      actionable = true;
    }
  }

  if (!actionable) {
    if (tx.dirty) await tx.commit(bus);
    if (prep.compactionComplete.length > 0) await reloadView(deps, thread);
    return finish(deps, thread, tx, 'skipped');
  }

  const outcome = await converse(deps, thread, tx, opts.signal);
  await tx.commit(bus);
  if (prep.compactionComplete.length > 0) await reloadView(deps, thread);
  // Dispatch strictly after the commit: a crash before this line leaves an undispatched call that
  // the next start dispatches, a crash after it leaves a dispatched one that is never re-run.
  if (outcome === 'awaiting-tool' && record.pendingCall) await deps.dispatch(record, record.pendingCall);
  if (outcome === 'completed') await finishEphemeral(deps, thread);
  return finish(deps, thread, tx, outcome);
}

/** Step 4-5: completions, looping through synchronous tools, until a reply, an async call or a stop. */
async function converse(deps: SliceDeps, thread: LoadedThread, tx: Turn, signal: AbortSignal): Promise<SliceOutcome> {
  const { bus } = deps;
  const record = thread.record;
  const threadId = record.id;
  const tools = deps.tools.definitions(record);
  for (;;) {
    const budget = budgetExceeded(deps, record, tx);
    if (budget) {
      bus.emit({ type: 'error', threadId, kind: 'budget', message: budget });
      return 'failed';
    }
    const model = deps.model(record);
    const request = {
      model,
      system: deps.systemPrompt(record),
      messages: toRequestMessages(tx.view()),
      tools,
      maxTokens: deps.maxTokens,
    };
    bus.emit({ type: 'completion-started', threadId, model });
    let result;
    try {
      result = await runCompletion(deps.provider, request, deps.retry, signal, {
        onText: (delta) => bus.emit({ type: 'text-delta', threadId, text: delta }),
        onRetry: ({ attempt, delayMs, error }) =>
          bus.emit({ type: 'completion-retry', threadId, attempt, delayMs, kind: error.kind, message: error.message }),
      });
    } catch (err) {
      const e = err instanceof ModelError ? err : new ModelError('other', String(err));
      bus.emit({ type: 'error', threadId, kind: e.kind, message: e.message });
      return 'failed';
    }
    tx.recordCompletion(result.usage, model);
    bus.emit({ type: 'completion-finished', threadId, model, usage: result.usage });
    if (result.cancelled) {
      if (result.text) tx.push(buildReplyTurn(result.text));
      return 'interrupted';
    }
    const call = result.toolCall;
    const reply = buildReplyTurn(result.text, call);
    if (reply.content.length > 0) tx.push(reply);
    if (!call) return 'completed';

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
      tx.failedInARow++;
      continue;
    }
    const pending: PendingCall = { id: call.id, name: call.name, input: resolution.input, dispatched: false };
    if (resolution.kind === 'async') {
      tx.pendingCall = pending;
      return 'awaiting-tool';
    }
    const output = await runSync(deps, thread, tx, resolution.tool, pending);
    if (output.stop === true) return 'completed';
    // A failed call is a correction the model has to make; a successful one (the next of many
    // spawn_thread calls fanning out work) is progress and doesn't count toward the loop bound.
    tx.failedInARow = output.isError === true ? tx.failedInARow + 1 : 0;
  }
}

/**
 * A synchronous call: committed first (spawning inherits history up to this call, and a crash
 * mid-call leaves a pending call that the next start re-runs), then executed inline.
 */
async function runSync(deps: SliceDeps, thread: LoadedThread, tx: Turn, tool: SyncTool, call: PendingCall): Promise<ToolOutput> {
  tx.pendingCall = call;
  await tx.commit(deps.bus);
  let output: ToolOutput;
  try {
    output = await tool.execute(call.input, {
      threadId: thread.record.id,
      threadStack: thread.record.stack,
      call: { id: call.id, name: call.name, input: call.input },
      thread: thread.record,
    });
  } catch (err) {
    // Closing: no result is recorded, so the committed call stays pending and re-runs next start.
    if (deps.closing.aborted) throw new SystemClosingError();
    output = { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
  tx.pendingCall = null;
  if (output.unsubscribe) tx.subscriptions = tx.subscriptions.filter((s) => !output.unsubscribe!.includes(s.callId));
  tx.pushResult(deps.bus, call.id, output);
  return output;
}

function budgetExceeded(deps: SliceDeps, record: ThreadRecord, tx: Turn): string | null {
  if (tx.failedInARow >= deps.limits.maxCompletionsPerSlice) {
    return (
      `Stopped after ${tx.failedInARow} model calls in a row whose tool calls failed; ` +
      'send a message to continue.'
    );
  }
  if (record.completions + tx.completions >= deps.limits.maxCompletionsPerThread) {
    return (
      `Thread ${record.id} reached its budget of ${deps.limits.maxCompletionsPerThread} model calls; ` +
      'raise the limit to let it continue.'
    );
  }
  return null;
}

/** Tell observers what preparation did, and tell tools whose calls were interrupted. */
function announce(deps: SliceDeps, thread: LoadedThread, prep: Preparer): void {
  const { bus } = deps;
  const threadId = thread.record.id;
  for (const d of prep.dropped) bus.emit({ type: 'input-dropped', threadId, inputId: d.input.id, reason: d.reason });
  if (prep.deferred.length > 0) bus.emit({ type: 'input-deferred', threadId, inputIds: prep.deferred.map((i) => i.id) });
  for (const input of prep.accepted) {
    const body = input.body;
    if (body.kind === 'tool_result') {
      bus.emit({
        type: 'tool-result',
        threadId,
        toolUseId: body.toolUseId,
        content: body.content,
        isError: body.isError === true,
        ...(body.subscription ? { subscription: true } : {}),
      });
    } else if (body.kind === 'user_text') {
      bus.emit({ type: 'input-accepted', threadId, input });
    }
  }
  for (const inj of prep.injected) bus.emit({ type: 'event-injected', threadId, ...inj });
  for (const { call, reason } of prep.interrupted) {
    const tool = deps.tools.get(call.name);
    if (tool?.kind === 'async') {
      tool.cancel?.({ threadId, threadStack: thread.record.stack, call, thread: thread.record });
    }
    bus.emit({ type: 'tool-interrupted', threadId, callId: call.id, reason });
  }
}

/** After a compaction: the stored view now starts with the summary. */
async function reloadView(deps: SliceDeps, thread: LoadedThread): Promise<void> {
  const fresh = await deps.store.loadThread(thread.record.id);
  if (!fresh) return;
  thread.history = fresh.history;
  thread.ownOffset = fresh.ownOffset;
  thread.ownFrom = fresh.ownFrom;
  // The next completion reports the new size; until then the context counts as empty, so
  // compaction doesn't trigger again on the old figure.
  thread.record.contextTokens = 0;
  deps.bus.emit({ type: 'compaction-applied', threadId: thread.record.id });
}

async function finish(deps: SliceDeps, thread: LoadedThread, tx: Turn, outcome: SliceOutcome): Promise<SliceOutcome> {
  deps.bus.emit({
    type: 'slice-finished',
    threadId: thread.record.id,
    outcome,
    usage: tx.sliceUsage,
    completions: tx.sliceCompletions,
    contextTokens: thread.record.contextTokens,
  });
  return outcome;
}
