import { runCompletion, type CompletionToolCall, type RetryPolicy } from './completion.js';
import type { Resolution } from './tool-registry.js';
import { ModelError, SystemClosingError } from './errors.js';
import type { SliceOutcome } from './events.js';
import { Turn } from './turn.js';
import { toRequestMessages, userTextMessage } from './history.js';
import type { InputMessage } from './input.js';
import { Preparer } from './prepare.js';
import type { Effort } from './models.js';
import type { CompletionRequest, ModelProvider, ThinkingDisplay } from './provider.js';
import { awaitsReply, contextFull, MAX_CONTINUATIONS, MAX_PAUSES, refusalMessage, requestCompaction, stopOf } from './reply-stop.js';
import { STOP_PHRASES } from './wording.js';
import type { RuntimeServices } from './services.js';
import type { LoadedThread, PendingCall, ThreadRecord } from './store.js';
import { finishEphemeral, spawnCompactionThread, spawnEventThread, startChildren } from './thread-lifecycle.js';
import type { ToolOutput, SyncTool } from './tool.js';
import type { ToolPermit } from './system-options.js';

/** What a slice needs; the same for local and step mode. */
export interface SliceDeps extends RuntimeServices {
  provider: ModelProvider;
  model(thread: ThreadRecord): string;
  systemPrompt(thread: ThreadRecord): string;
  retry: RetryPolicy;
  /** Output tokens asked per reply of `model`. */
  maxTokens(model: string): number;
  effort(thread: ThreadRecord): Effort | undefined;
  thinkingDisplay: ThinkingDisplay;
  /** Hands a committed async call to its tool (after marking it dispatched). */
  dispatch(thread: ThreadRecord, call: PendingCall): Promise<void>;
  /** The host's permission check of each call (see SystemOptions.permit). */
  permit?: ToolPermit;
}

export interface SliceOptions {
  signal: AbortSignal;
  /** The inputs came through the durable queue, which already refused duplicate ids. */
  deduplicated: boolean;
  /**
   * Gets (in `taken`) the ids of inputs the slice read from the store itself (waiting ones): a router
   * holding some of them for a later batch drops them there (they are consumed, or wait in the
   * store, where the next slice reads them).
   */
  takenFromStore?: { taken?: Set<string> };
}

/**
 * One slice of one thread: prepare inputs, stream completions (looping while every call of a
 * reply is answered inline), commit, and only then dispatch the reply's asynchronous calls.
 * `thread` is updated in place after every commit, so a caller may keep it as a cache of the
 * stored state.
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

  // Calls committed but never dispatched (a crash between commit and dispatch) go out first, with
  // their original ids. Synchronous ones run again below (built-ins are idempotent by call id).
  await dispatchWaiting(deps, record);

  const processed = opts.deduplicated ? new Set<string>() : await store.processedIds(threadId, inputs.map((i) => i.id));
  const prep = new Preparer({
    record,
    history: thread.history,
    isPassive: (name) => deps.tools.isPassive(name),
    continuesInBackground: (call) => {
      const tool = deps.tools.get(call.name);
      if (tool?.kind !== 'async' || tool.background === undefined) return false;
      return tool.canBackground?.({ threadId, threadStack: record.stack, call, thread: record }) ?? true;
    },
    processed,
  });
  if (record.hasDeferred) {
    // Inputs that waited (behind a pending call, or quiet events for a wake) came before this
    // slice's own: they are folded first, in arrival order, and wait again if they still must.
    const batch = new Set(inputs.map((i) => i.id));
    const waiting = (await store.pendingInputsFor(threadId)).filter((i) => !batch.has(i.id));
    // Some may not have reached the router's batch yet: it must not hand them over again.
    const holder = opts.takenFromStore;
    if (holder && waiting.length > 0) {
      const taken = (holder.taken ??= new Set<string>());
      for (const i of waiting) taken.add(i.id);
    }
    prep.add([...waiting, ...inputs]);
  } else {
    prep.add(inputs);
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

  // Synchronous calls that can run now: ones a crash cut short, and those that run last once the
  // reply's asynchronous calls have just been answered.
  let actionable = prep.actionable;
  if (tx.batch.length > 0) {
    const ran = await runSyncCalls(deps, thread, tx);
    if (ran.stop) {
      tx.closeBatchIfComplete();
      await tx.commit(bus);
      return finish(deps, thread, tx, 'completed');
    }
    if (tx.closeBatchIfComplete()) actionable = true;
  }

  if (!actionable) {
    if (tx.dirty) await tx.commit(bus);
    // A thread stopped by a full context waits, its history ending in a request to go on,
    // until the summary is in: then it goes on (asked again if the summary took the request in).
    const resume = prep.compactionComplete.length > 0 && awaitsReply(thread, tx);
    if (prep.compactionComplete.length > 0) await reloadView(deps, thread);
    if (!resume) return finish(deps, thread, tx, 'skipped');
    if (!awaitsReply(thread, tx)) tx.push(userTextMessage(STOP_PHRASES.contextFull));
    tx.afterCompaction = true;
    const resumed = await converse(deps, thread, tx, opts.signal);
    await tx.commit(bus);
    if (resumed === 'awaiting-tool') await dispatchWaiting(deps, record);
    return finish(deps, thread, tx, resumed);
  }

  const outcome = await converse(deps, thread, tx, opts.signal);
  await tx.commit(bus);
  if (prep.compactionComplete.length > 0) await reloadView(deps, thread);
  // Dispatch strictly after the commit: a crash before this line leaves undispatched calls that
  // the next start dispatches, a crash after one's mark leaves it dispatched and never re-run.
  if (outcome === 'awaiting-tool') await dispatchWaiting(deps, record);
  if (outcome === 'completed') await finishEphemeral(deps, thread);
  return finish(deps, thread, tx, outcome);
}

/** Step 4-5: completions, looping while every call of a reply is answered inline. */
async function converse(deps: SliceDeps, thread: LoadedThread, tx: Turn, signal: AbortSignal): Promise<SliceOutcome> {
  const { bus } = deps;
  const record = thread.record;
  const threadId = record.id;
  const tools = deps.tools.offered();
  for (;;) {
    const budget = budgetExceeded(deps, record, tx);
    if (budget) {
      bus.emit({ type: 'error', threadId, kind: 'budget', message: budget });
      return 'failed';
    }
    const model = deps.model(record);
    const effort = deps.effort(record);
    const request: CompletionRequest = {
      model,
      system: deps.systemPrompt(record),
      messages: toRequestMessages(tx.view()),
      tools,
      maxTokens: deps.maxTokens(model),
      thinkingDisplay: deps.thinkingDisplay,
      ...(effort !== undefined && { effort }),
    };
    bus.emit({ type: 'completion-started', threadId, model, ...(tx.continuing && { continues: true as const }) });
    let result;
    // The time spent on the API, for a run's duration_api_ms: the backoff waits between attempts are not.
    const requested = performance.now();
    let backoffMs = 0;
    try {
      result = await runCompletion(deps.provider, request, deps.retry, signal, {
        onText: (delta) => bus.emit({ type: 'text-delta', threadId, text: delta }),
        onThinking: (delta) => bus.emit({ type: 'thinking-delta', threadId, text: delta }),
        onToolStart: (call) => bus.emit({ type: 'tool-call-streaming', threadId, callId: call.id, name: call.name }),
        onSilence: (since) => bus.emit({ type: 'completion-silence', threadId, since }),
        onRetry: ({ attempt, delayMs, error }) => {
          backoffMs += delayMs;
          bus.emit({ type: 'completion-retry', threadId, attempt, delayMs, kind: error.kind, message: error.message });
        },
        retryRequest: (failed) => retryRequest(deps, record, failed),
      });
    } catch (err) {
      const e = err instanceof ModelError ? err : new ModelError('other', String(err));
      bus.emit({ type: 'error', threadId, kind: e.kind, message: e.message });
      return 'failed';
    }
    tx.recordCompletion(result.usage, result.model);
    bus.emit({
      type: 'completion-finished',
      threadId,
      model: result.model,
      usage: result.usage,
      stopReason: result.stopReason,
      content: result.content,
      ...(result.stopDetails && { stopDetails: result.stopDetails }),
      durationMs: Math.max(0, Math.round(performance.now() - requested - backoffMs)),
    });
    tx.continuing = false;
    const stop = stopOf(result.stopReason, result.cancelled);
    // A refused reply's calls never run, so they don't go into history unanswered.
    const content = stop === 'refusal' ? result.content.filter((b) => b.type !== 'tool_use') : result.content;
    if (content.length > 0) tx.push({ role: 'assistant', content });
    if (result.cancelled) return 'interrupted';
    if (stop === 'refusal') {
      bus.emit({ type: 'error', threadId, kind: 'refusal', message: refusalMessage(result.stopDetails) });
      return 'failed';
    }
    if (stop === 'pause') {
      // The API paused a long turn: the reply goes back as it is (the last message), and the
      // model carries on with it. Bounded like any loop without progress.
      if (++tx.pauses > MAX_PAUSES) {
        bus.emit({ type: 'error', threadId, kind: 'budget', message: `The model paused its turn ${MAX_PAUSES} times in a row; send a message to continue.` });
        return 'failed';
      }
      continue;
    }
    tx.pauses = 0;
    if (result.toolCalls.length === 0) {
      if (stop === 'complete') return 'completed';
      if (stop === 'context-full') return contextFull(deps, thread, tx);
      // A text answer cut by the output limit: the model goes on with it in another reply.
      if (++tx.continuations > MAX_CONTINUATIONS) {
        bus.emit({ type: 'error', threadId, kind: 'budget', message: `The answer reached the output limit ${MAX_CONTINUATIONS + 1} times in a row and was left cut.` });
        return 'failed';
      }
      tx.push(userTextMessage(STOP_PHRASES.replyCut));
      tx.continuing = true;
      continue;
    }
    tx.continuations = 0;
    // A reply cut mid-call: the last call's arguments are incomplete, so it never runs. (Cut in
    // text after its calls, the calls are whole.)
    const cut = stop !== 'complete' && result.content.at(-1)?.type === 'tool_use' ? result.toolCalls.at(-1)?.id : undefined;
    if (stop === 'context-full') await requestCompaction(deps, thread, tx);

    // The validator is loaded on the first reply with calls (not before the first request),
    // unless each called tool came with its check made ahead of time.
    if (!deps.tools.checksReady(result.toolCalls)) await deps.tools.ready();
    resolveBatch(deps, threadId, result.toolCalls, tx, cut === undefined ? undefined : { id: cut, limit: request.maxTokens });
    if (tx.batch.some((c) => c.result === undefined && deps.tools.get(c.name)?.kind === 'sync')) {
      // The reply and its calls are durable before any runs: a spawned child inherits history up
      // to this reply, and a crash mid-call leaves calls that the next start runs again.
      await tx.commit(bus);
      const ran = await runSyncCalls(deps, thread, tx);
      if (ran.stop) {
        tx.closeBatchIfComplete();
        return 'completed';
      }
    }
    const allFailed = tx.batch.every((c) => c.result?.is_error === true);
    if (!tx.closeBatchIfComplete()) return 'awaiting-tool';
    // Failed calls are corrections the model has to make; successful ones (a root spawning its
    // children) are progress and don't count toward the loop bound.
    tx.failedInARow = allFailed ? tx.failedInARow + 1 : 0;
  }
}

/**
 * The reply's calls as a batch, in order: calls that can't run (unknown tool, bad arguments, past
 * the per-reply cap) are answered at once with an error the model can act on.
 */
function resolveBatch(
  deps: SliceDeps,
  threadId: string,
  calls: readonly CompletionToolCall[],
  tx: Turn,
  cut?: { id: string; limit: number },
): void {
  const { bus } = deps;
  const cap = deps.limits.maxCallsPerReply;
  const batch: PendingCall[] = [];
  const errors: Array<{ id: string; message: string }> = [];
  for (const [i, call] of calls.entries()) {
    const resolved: Resolution =
      call.id === cut?.id
        ? { kind: 'error' as const, message: STOP_PHRASES.callCut.replace('{limit}', String(cut.limit)) }
        : i < cap
          ? deps.tools.resolve(call)
          : { kind: 'error' as const, message: overCap(calls.length, cap) };
    // Asked only of calls that would run: a call with bad arguments gets the correction it needs.
    const denial = resolved.kind === 'error' ? undefined : deps.permit?.(threadId, { id: call.id, name: call.name, input: resolved.input });
    const resolution: Resolution = denial ? { kind: 'error', message: `Error: ${denial.deny}` } : resolved;
    // A denied call keeps its display line: UIs show what was refused.
    const tool = resolved.kind === 'error' ? undefined : resolved.tool;
    const display = tool?.display?.(call.input);
    bus.emit({
      type: 'tool-call',
      threadId,
      call: { id: call.id, name: call.name, input: call.input },
      sync: resolution.kind !== 'async',
      ...(display === undefined ? {} : { display }),
      ...(resolution.kind === 'async' && resolution.tool.passive === true ? { passive: true as const } : {}),
    });
    if (denial) bus.emit({ type: 'tool-denied', threadId, call: { id: call.id, name: call.name, input: call.input }, reason: denial.deny });
    batch.push({ id: call.id, name: call.name, input: resolution.kind === 'error' ? call.input : resolution.input, dispatched: false });
    if (resolution.kind === 'error') errors.push({ id: call.id, message: resolution.message });
  }
  tx.batch = batch;
  for (const e of errors) tx.answer(bus, e.id, { content: e.message, isError: true });
}

function overCap(count: number, cap: number): string {
  return (
    `Error: this reply made ${count} tool calls, and at most ${cap} run per reply, so this one did not run. ` +
    'Make it again in your next reply, splitting the work over several replies.'
  );
}

/**
 * Runs the batch's synchronous calls that may run now, in call order. A call that runs last
 * (report, close, spawn) waits until every asynchronous call of the reply has its result. After
 * a call that ends the thread, the later ones are answered without running.
 */
async function runSyncCalls(deps: SliceDeps, thread: LoadedThread, tx: Turn): Promise<{ stop: boolean }> {
  const asyncWaiting = tx.batch.some(
    (c) => c.result === undefined && !c.inherited && deps.tools.get(c.name)?.kind === 'async',
  );
  let stop = false;
  const spawned = new Map<string, string>();
  for (const call of tx.batch) {
    if (call.result !== undefined || call.inherited) continue;
    const tool = deps.tools.get(call.name);
    if (tool?.kind !== 'sync' || (tool.runsLast === true && asyncWaiting)) continue;
    if (stop) {
      tx.answer(deps.bus, call.id, { content: 'Error: not run: an earlier call of this reply closed the thread.', isError: true });
      continue;
    }
    const output = await executeSync(deps, thread, tool, call);
    if (output.unsubscribe) tx.subscriptions = tx.subscriptions.filter((s) => !output.unsubscribe!.includes(s.callId));
    if (output.spawned !== undefined) spawned.set(call.id, output.spawned);
    tx.answer(deps.bus, call.id, output);
    if (output.stop === true) stop = true;
  }
  // Before the results are committed: a crash in between runs the spawns again (a no-op for
  // children that exist) and delivers again (deduplicated by id), so no child is left unstarted.
  if (spawned.size > 0) await startChildren(deps, thread.record, tx.batch, spawned);
  return { stop };
}

async function executeSync(deps: SliceDeps, thread: LoadedThread, tool: SyncTool, call: PendingCall): Promise<ToolOutput> {
  try {
    return await tool.execute(call.input, {
      threadId: thread.record.id,
      threadStack: thread.record.stack,
      call: { id: call.id, name: call.name, input: call.input },
      thread: thread.record,
    });
  } catch (err) {
    // Closing: no result is recorded, so the committed call stays waiting and runs next start.
    if (deps.closing.aborted) throw new SystemClosingError();
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}

/** Hands the batch's committed, undispatched asynchronous calls to their tools, in call order. */
async function dispatchWaiting(deps: SliceDeps, record: ThreadRecord): Promise<void> {
  for (const call of record.batch) {
    if (call.result !== undefined || call.dispatched || call.inherited) continue;
    if (deps.tools.get(call.name)?.kind === 'async') await deps.dispatch(record, call);
  }
}

/** A retry goes to the thread's model as it is now: the host may have switched it (a fallback). */
function retryRequest(deps: SliceDeps, record: ThreadRecord, failed: CompletionRequest): CompletionRequest {
  const model = deps.model(record);
  if (model === failed.model) return failed;
  const { effort: _, ...rest } = failed;
  const effort = deps.effort(record);
  return { ...rest, model, maxTokens: deps.maxTokens(model), ...(effort !== undefined && { effort }) };
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
        ...(body.display ? { display: body.display } : {}),
      });
    } else if (body.kind === 'user_text') {
      bus.emit({ type: 'input-accepted', threadId, input });
    }
  }
  for (const inj of prep.injected) bus.emit({ type: 'event-injected', threadId, ...inj });
  for (const { call, reason, result, background } of prep.interrupted) {
    const tool = deps.tools.get(call.name);
    if (background && tool?.kind === 'async') {
      tool.background?.({ threadId, threadStack: thread.record.stack, call, thread: thread.record });
      // Observers see the call answered as one that started a subscription.
      bus.emit({ type: 'tool-result', threadId, toolUseId: call.id, content: result.content, isError: false, subscription: true });
      continue;
    }
    if (tool?.kind === 'async') {
      tool.cancel?.({ threadId, threadStack: thread.record.stack, call, thread: thread.record });
    }
    const passive = deps.tools.isPassive(call.name);
    bus.emit({ type: 'tool-interrupted', threadId, callId: call.id, reason, ...(passive ? { passive: true as const } : {}) });
    // The call has its (synthetic) result now: observers that pair calls with results see it.
    bus.emit({ type: 'tool-result', threadId, toolUseId: call.id, content: result.content, isError: result.is_error === true });
  }
}

/** After a compaction: the stored view now starts with the summary. */
async function reloadView(deps: SliceDeps, thread: LoadedThread): Promise<void> {
  // Here, in the thread's own slice: every turn committed before this point was made with the
  // old view, every one after with the new (see CompactionSummary.appliedAt).
  await deps.store.applySummary(thread.record.id);
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

function finish(deps: SliceDeps, thread: LoadedThread, tx: Turn, outcome: SliceOutcome): Promise<SliceOutcome> {
  deps.bus.emit({
    type: 'slice-finished',
    threadId: thread.record.id,
    outcome,
    usage: tx.sliceUsage,
    completions: tx.sliceCompletions,
    contextTokens: thread.record.contextTokens,
    ...(outcome === 'awaiting-tool' ? { waiting: waitingOn(deps, thread.record) } : {}),
  });
  return Promise.resolve(outcome);
}

/** Whether the calls a thread waits on are all waits (sleep), which any input ends. */
function waitingOn(deps: SliceDeps, record: ThreadRecord): 'passive' | 'active' {
  const open = record.batch.filter((c) => c.result === undefined && !c.inherited);
  return open.length > 0 && open.every((c) => deps.tools.isPassive(c.name)) ? 'passive' : 'active';
}
