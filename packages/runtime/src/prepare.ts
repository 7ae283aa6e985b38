import { derivedId } from './ids.js';
import type { EventInput, InputMessage } from './input.js';
import { isDeferrable } from './input.js';
import type { HistoryMessage, ResultContent, ToolResultBlock, ToolUseBlock } from './messages.js';
import { text } from './messages.js';
import { toolResultMessage, userTextMessage } from './history.js';
import { answer, isComplete, resultBlock, resultsMessage, unanswered, unansweredCall } from './batch.js';
import type { PendingCall, Subscription, ThreadRecord } from './store.js';
import type { ToolDisplay } from './tool.js';
import { INJECTED_TOOL_NAME, INTERRUPTED_BY_USER, MOVED_TO_BACKGROUND, readParentMessage, readReport, WOKEN_BY_INPUT, type InjectedReport } from './wording.js';

export type DropReason = 'duplicate' | 'stale' | 'closed' | 'inactive';

export interface Injected {
  injectedId: string;
  final?: boolean;
  source: 'event' | 'report' | 'parent';
  originalCallId: string;
  content: ResultContent[];
  childThreadId?: string;
  attachment?: unknown;
  report?: InjectedReport;
  message?: string;
  task?: string;
  display?: ToolDisplay;
}

export interface PrepareContext {
  record: ThreadRecord;
  /** The thread's loaded history: where original calls of injected events are looked up. */
  history: readonly HistoryMessage[];
  isPassive(toolName: string): boolean;
  /** Whether the tool keeps a running call going in the background when the user writes (see AsyncTool.background). */
  continuesInBackground?(call: PendingCall): boolean;
  processed: ReadonlySet<string>;
}

/**
 * Step 2 of a slice, pure: fold queued inputs into history in arrival order.
 * - duplicates (same id) and stale tool results (answering no waiting call) are dropped;
 * - a tool result answers its call of the batch; when every call of the batch has its result, the
 *   results go into history as one user message, in call order;
 * - user text interrupts every call of the batch still waiting, which get synthetic results so
 *   history stays well formed;
 * - events, reports and parent messages wait (stay queued) while an active call of the batch
 *   waits, and follow the batch's results in order; passive waits (sleep) are ended by them instead;
 * - associative events, reports and parent messages are shown as an injected
 *   `receive_event__injected` call plus its result; threaded events are handed back for the slice
 *   to spawn an event thread; compaction inputs are handed back too.
 */
export class Preparer {
  readonly append: HistoryMessage[] = [];
  readonly consumed: string[] = [];
  readonly accepted: InputMessage[] = [];
  readonly dropped: Array<{ input: InputMessage; reason: DropReason }> = [];
  /** Calls ended by new input, with the result the model will read for each. */
  readonly interrupted: Array<{ call: PendingCall; reason: 'user' | 'input'; result: ToolResultBlock; background?: true }> = [];
  readonly deferred: InputMessage[] = [];
  readonly threaded: Array<{ input: InputMessage; event: EventInput; sub: Subscription }> = [];
  readonly injected: Injected[] = [];
  readonly compactionComplete: string[] = [];
  compaction = false;
  batch: PendingCall[];
  subscriptions: Subscription[];
  private readonly seen = new Set<string>();
  private held: InputMessage[] = [];
  /** Quiet events seen in this fold, in order: they reach history only if something wakes the thread. */
  private quiet: InputMessage[] = [];
  private acceptedAny = false;

  constructor(private readonly ctx: PrepareContext) {
    this.batch = ctx.record.batch;
    this.subscriptions = ctx.record.subscriptions;
  }

  /** An active (non-passive) call of the batch waits for its result: deferrable inputs must wait. */
  get activeCallPending(): boolean {
    return this.batch.some((c) => c.result === undefined && !this.ctx.isPassive(c.name));
  }

  /** Something new reached history and no call waits: the model has something to answer. */
  get actionable(): boolean {
    return this.acceptedAny && this.batch.length === 0;
  }

  add(inputs: readonly InputMessage[]): this {
    for (const input of inputs) this.one(input);
    // Inputs held back behind the pending call follow its result when this batch settled it.
    if (!this.activeCallPending && this.held.length > 0) {
      const held = this.held;
      this.held = [];
      for (const input of held) this.one(input);
    }
    return this;
  }

  /**
   * Inputs still waiting when the fold ended stay queued (not consumed): those held behind a
   * pending call, and quiet events when nothing else woke the thread.
   */
  finish(): this {
    if (this.acceptedAny) this.flushQuiet();
    this.deferred.push(...this.quiet, ...this.held);
    this.quiet = [];
    this.held = [];
    return this;
  }

  private one(input: InputMessage): void {
    if (this.ctx.processed.has(input.id) || this.seen.has(input.id)) {
      this.dropped.push({ input, reason: 'duplicate' });
      return;
    }
    if (this.ctx.record.status === 'closed') {
      this.consume(input);
      this.dropped.push({ input, reason: 'closed' });
      return;
    }
    const body = input.body;
    // Once one input waits, later ones wait behind it: order is kept.
    if (isDeferrable(body) && (this.activeCallPending || this.held.length > 0)) {
      this.held.push(input);
      return;
    }
    if (body.kind === 'event' && body.quiet === true && body.associative === true) {
      if (this.subscriptions.some((s) => s.callId === body.toolUseId)) {
        this.quiet.push(input);
        return;
      }
    } else if (body.kind === 'user_text') {
      // The user's words end the waits first; output gathered meanwhile then comes before them.
      this.settlePending('user');
      this.flushQuiet();
    } else if (body.kind !== 'tool_result' && body.kind !== 'compaction' && body.kind !== 'compaction_complete') {
      this.flushQuiet();
    }
    this.consume(input);
    switch (body.kind) {
      case 'user_text':
        this.append.push(userTextMessage(body.text));
        this.accept(input);
        return;
      case 'tool_result':
        if (!unansweredCall(this.batch, body.toolUseId)) {
          this.dropped.push({ input, reason: 'stale' });
          return;
        }
        this.batch = answer(this.batch, body.toolUseId, resultBlock(body.toolUseId, body.content, body.isError === true));
        this.closeBatchIfComplete();
        if (body.subscription) {
          const call = this.findCall(body.toolUseId);
          this.subscriptions = [
            ...this.subscriptions.filter((s) => s.callId !== body.toolUseId),
            { callId: body.toolUseId, name: call?.name ?? 'unknown', input: call?.input ?? {} },
          ];
        }
        this.accept(input);
        this.flushQuiet();
        return;
      case 'event': {
        const sub = this.subscriptions.find((s) => s.callId === body.toolUseId);
        if (!sub) {
          // Events of a subscription that ended (or never started) are discarded.
          this.dropped.push({ input, reason: 'inactive' });
          return;
        }
        if (body.final) this.subscriptions = this.subscriptions.filter((s) => s !== sub);
        if (!body.associative) {
          this.threaded.push({ input, event: body, sub });
          return;
        }
        this.inject(input, 'event', body.toolUseId, sub.name, sub.input, body.content, body.isError === true, {
          final: body.final === true,
          ...(body.display ? { display: body.display } : {}),
        });
        return;
      }
      case 'report': {
        const call = this.findCall(body.spawnCallId);
        // Queued by an older version without the UI's copy: read back from the framing.
        const report = body.report ?? readReport(body.text);
        this.inject(input, 'report', body.spawnCallId, call?.name ?? 'spawn_thread', call?.input ?? {}, [text(body.text)], false, {
          childThreadId: body.childThreadId,
          attachment: body.attachment,
          ...(report ? { report } : {}),
          ...taskOf(call),
        });
        return;
      }
      case 'parent_message': {
        const spawnCallId = this.ctx.record.spawnCallId ?? 'unknown';
        const call = this.findCall(spawnCallId);
        const message = body.message ?? readParentMessage(body.text);
        this.inject(input, 'parent', spawnCallId, call?.name ?? 'spawn_thread', call?.input ?? {}, [text(body.text)], false, {
          ...(message !== undefined ? { message } : {}),
          ...taskOf(call),
        });
        return;
      }
      case 'compaction':
        this.compaction = true;
        return;
      case 'compaction_complete':
        this.compactionComplete.push(body.childThreadId);
        return;
    }
  }

  /** Quiet events seen so far reach history now (something woke the thread), in their order. */
  private flushQuiet(): void {
    if (this.quiet.length === 0) return;
    const quiet = this.quiet;
    this.quiet = [];
    for (const input of quiet) {
      this.consume(input);
      const body = input.body as EventInput;
      const sub = this.subscriptions.find((s) => s.callId === body.toolUseId);
      if (!sub) {
        this.dropped.push({ input, reason: 'inactive' });
        continue;
      }
      if (body.final) this.subscriptions = this.subscriptions.filter((s) => s !== sub);
      this.inject(input, 'event', body.toolUseId, sub.name, sub.input, body.content, body.isError === true, {
        final: body.final === true,
        ...(body.display ? { display: body.display } : {}),
      });
    }
  }

  private consume(input: InputMessage): void {
    this.seen.add(input.id);
    this.consumed.push(input.id);
  }

  private accept(input: InputMessage): void {
    this.accepted.push(input);
    this.acceptedAny = true;
  }

  /** Every call answered: the results reach history together, in call order. */
  private closeBatchIfComplete(): void {
    if (this.batch.length === 0 || !isComplete(this.batch)) return;
    this.append.push(resultsMessage(this.batch));
    this.batch = [];
  }

  /**
   * New input ends what the thread was waiting for: passive waits end, active calls are
   * interrupted (only user text gets here while one waits: other inputs are held back).
   */
  private settlePending(cause: 'user' | 'input'): void {
    for (const call of unanswered(this.batch)) {
      if (cause === 'user' && !call.inherited && this.ctx.continuesInBackground?.(call) === true) {
        // The call goes on as a subscription: its output and end arrive as events.
        const result = resultBlock(call.id, [text(MOVED_TO_BACKGROUND.replace('{call}', call.id))], false);
        this.batch = answer(this.batch, call.id, result);
        this.subscriptions = [...this.subscriptions.filter((s) => s.callId !== call.id), { callId: call.id, name: call.name, input: call.input }];
        this.interrupted.push({ call, reason: cause, result, background: true });
        continue;
      }
      const passive = this.ctx.isPassive(call.name);
      const result = passive
        ? resultBlock(call.id, [text(WOKEN_BY_INPUT)], false)
        : resultBlock(call.id, [text(INTERRUPTED_BY_USER)], true);
      this.batch = answer(this.batch, call.id, result);
      if (!call.inherited) this.interrupted.push({ call, reason: cause, result });
    }
    this.closeBatchIfComplete();
  }

  private inject(
    input: InputMessage,
    source: Injected['source'],
    originalCallId: string,
    originalName: string,
    originalArgs: Record<string, unknown>,
    content: ResultContent[],
    isError: boolean,
    extra: Omit<Injected, 'injectedId' | 'source' | 'originalCallId' | 'content'> = {},
  ): void {
    this.settlePending('input');
    if (source === 'event' && this.mergeEvent(input, originalCallId, content, isError, extra)) return;
    const injectedId = derivedId('toolu_ev_', this.ctx.record.id, input.id);
    this.append.push({
      role: 'assistant',
      content: [
        {
          type: 'tool_use',
          id: injectedId,
          name: INJECTED_TOOL_NAME,
          input: { original_tool_name: originalName, original_tool_call_id: originalCallId, original_args: originalArgs },
        },
      ],
    });
    this.append.push(toolResultMessage(injectedId, content, isError));
    const info: Injected = { injectedId, source, originalCallId, content };
    if (extra.childThreadId !== undefined) info.childThreadId = extra.childThreadId;
    if (extra.attachment !== undefined) info.attachment = extra.attachment;
    if (extra.final) info.final = true;
    if (extra.report) info.report = extra.report;
    if (extra.message !== undefined) info.message = extra.message;
    if (extra.task !== undefined) info.task = extra.task;
    if (extra.display) info.display = extra.display;
    this.injected.push(info);
    this.accept(input);
  }

  /**
   * An event that directly follows another of the same subscription in this fold joins it: one
   * injected call with their contents in order, instead of a call (repeating the original
   * arguments) per batch of output.
   */
  private mergeEvent(
    input: InputMessage,
    originalCallId: string,
    content: ResultContent[],
    isError: boolean,
    extra: Omit<Injected, 'injectedId' | 'source' | 'originalCallId' | 'content'>,
  ): boolean {
    const last = this.injected[this.injected.length - 1];
    const results = this.append[this.append.length - 1];
    const block = results?.content[0];
    if (
      last?.source !== 'event' ||
      last.originalCallId !== originalCallId ||
      last.final === true ||
      block?.type !== 'tool_result' ||
      block.tool_use_id !== last.injectedId ||
      results.content.length !== 1
    ) {
      return false;
    }
    const merged = joinContent(last.content, content);
    this.append[this.append.length - 1] = toolResultMessage(last.injectedId, merged, isError || block.is_error === true);
    last.content = merged;
    if (extra.final) last.final = true;
    if (extra.display) last.display = extra.display;
    this.accept(input);
    return true;
  }

  private findCall(callId: string): ToolUseBlock | undefined {
    for (const list of [this.append, this.ctx.history]) {
      for (let i = list.length - 1; i >= 0; i--) {
        for (const block of list[i].content) {
          if (block.type === 'tool_use' && block.id === callId) return block;
        }
      }
    }
    const sub = this.subscriptions.find((s) => s.callId === callId);
    return sub && { type: 'tool_use', id: callId, name: sub.name, input: sub.input };
  }
}

/** Two event payloads as one: texts that meet are joined by a line break. */
function joinContent(a: readonly ResultContent[], b: readonly ResultContent[]): ResultContent[] {
  const out = [...a];
  for (const block of b) {
    const prev = out[out.length - 1];
    if (prev?.type === 'text' && block.type === 'text') out[out.length - 1] = text(`${prev.text}\n${block.text}`);
    else out.push(block);
  }
  return out;
}

/** The instructions of a spawn call, which a report or a parent's message arrives on. */
function taskOf(call: ToolUseBlock | undefined): { task?: string } {
  const instructions = call?.name === 'spawn_thread' ? call.input.instructions : undefined;
  return typeof instructions === 'string' ? { task: instructions } : {};
}
