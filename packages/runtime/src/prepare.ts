import { derivedId } from './ids.js';
import type { EventInput, InputMessage } from './input.js';
import { isDeferrable } from './input.js';
import type { HistoryMessage, ResultContent, ToolUseBlock } from './messages.js';
import { text } from './messages.js';
import { toolResultMessage, userTextMessage } from './history.js';
import type { PendingCall, Subscription, ThreadRecord } from './store.js';
import { INJECTED_TOOL_NAME } from './tool-registry.js';

export const INTERRUPTED_BY_USER = 'Tool call interrupted by user';
export const WOKEN_BY_INPUT = 'The wait ended early: new input arrived.';

export type DropReason = 'duplicate' | 'stale' | 'closed' | 'inactive';

export interface Injected {
  injectedId: string;
  final?: boolean;
  source: 'event' | 'report' | 'parent';
  originalCallId: string;
  content: ResultContent[];
  childThreadId?: string;
  attachment?: unknown;
}

export interface PrepareContext {
  record: ThreadRecord;
  /** The thread's loaded history: where original calls of injected events are looked up. */
  history: readonly HistoryMessage[];
  isPassive(toolName: string): boolean;
  processed: ReadonlySet<string>;
}

/**
 * Step 2 of a slice, pure: fold queued inputs into history in arrival order.
 * - duplicates (same id) and stale tool results (not answering the pending call) are dropped;
 * - user text interrupts a pending call, which gets a synthetic result so history stays well formed;
 * - events, reports and parent messages wait (stay queued) while an active call is pending, and
 *   follow its result in order once it settles; a passive wait (sleep) is ended by them instead;
 * - associative events, reports and parent messages are shown as an injected
 *   `receive_event__injected` call plus its result; threaded events are handed back for the slice
 *   to spawn an event thread; compaction inputs are handed back too.
 */
export class Preparer {
  readonly append: HistoryMessage[] = [];
  readonly consumed: string[] = [];
  readonly accepted: InputMessage[] = [];
  readonly dropped: Array<{ input: InputMessage; reason: DropReason }> = [];
  readonly interrupted: Array<{ call: PendingCall; reason: 'user' | 'input' }> = [];
  readonly deferred: InputMessage[] = [];
  readonly threaded: Array<{ input: InputMessage; event: EventInput; sub: Subscription }> = [];
  readonly injected: Injected[] = [];
  readonly compactionComplete: string[] = [];
  compaction = false;
  actionable = false;
  pendingCall: PendingCall | null;
  subscriptions: Subscription[];
  private readonly seen = new Set<string>();
  private held: InputMessage[] = [];

  constructor(private readonly ctx: PrepareContext) {
    this.pendingCall = ctx.record.pendingCall;
    this.subscriptions = ctx.record.subscriptions;
  }

  /** A non-passive call is pending: deferrable inputs must wait. */
  get activeCallPending(): boolean {
    return this.pendingCall !== null && !this.ctx.isPassive(this.pendingCall.name);
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

  /** Inputs still waiting when the fold ended: they stay queued (not consumed). */
  finish(): this {
    this.deferred.push(...this.held);
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
    this.consume(input);
    switch (body.kind) {
      case 'user_text':
        this.settlePending('user');
        this.append.push(userTextMessage(body.text));
        this.accept(input);
        return;
      case 'tool_result':
        if (!this.pendingCall || this.pendingCall.id !== body.toolUseId) {
          this.dropped.push({ input, reason: 'stale' });
          return;
        }
        this.append.push(toolResultMessage(body.toolUseId, body.content, body.isError === true));
        this.pendingCall = null;
        if (body.subscription) {
          const call = this.findCall(body.toolUseId);
          this.subscriptions = [
            ...this.subscriptions.filter((s) => s.callId !== body.toolUseId),
            { callId: body.toolUseId, name: call?.name ?? 'unknown', input: call?.input ?? {} },
          ];
        }
        this.accept(input);
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
        });
        return;
      }
      case 'report': {
        const call = this.findCall(body.spawnCallId);
        this.inject(input, 'report', body.spawnCallId, call?.name ?? 'spawn_thread', call?.input ?? {}, [text(body.text)], false, {
          childThreadId: body.childThreadId,
          attachment: body.attachment,
        });
        return;
      }
      case 'parent_message': {
        const spawnCallId = this.ctx.record.spawnCallId ?? 'unknown';
        const call = this.findCall(spawnCallId);
        this.inject(input, 'parent', spawnCallId, call?.name ?? 'spawn_thread', call?.input ?? {}, [text(body.text)], false);
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

  private consume(input: InputMessage): void {
    this.seen.add(input.id);
    this.consumed.push(input.id);
  }

  private accept(input: InputMessage): void {
    this.accepted.push(input);
    this.actionable = true;
  }

  /** New input ends what the thread was waiting for: a passive wait ends, an active call is interrupted. */
  private settlePending(cause: 'user' | 'input'): void {
    const call = this.pendingCall;
    if (!call) return;
    const passive = this.ctx.isPassive(call.name);
    this.append.push(
      passive
        ? toolResultMessage(call.id, [text(WOKEN_BY_INPUT)], false)
        : toolResultMessage(call.id, [text(INTERRUPTED_BY_USER)], true),
    );
    this.interrupted.push({ call, reason: cause });
    this.pendingCall = null;
  }

  private inject(
    input: InputMessage,
    source: Injected['source'],
    originalCallId: string,
    originalName: string,
    originalArgs: Record<string, unknown>,
    content: ResultContent[],
    isError: boolean,
    extra: { childThreadId?: string; attachment?: unknown; final?: boolean } = {},
  ): void {
    this.settlePending('input');
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
    this.injected.push(info);
    this.accept(input);
  }

  private findCall(callId: string): ToolUseBlock | undefined {
    for (const list of [this.append, this.ctx.history]) {
      for (let i = list.length - 1; i >= 0; i--) {
        for (const block of list[i]!.content) {
          if (block.type === 'tool_use' && block.id === callId) return block;
        }
      }
    }
    const sub = this.subscriptions.find((s) => s.callId === callId);
    return sub && { type: 'tool_use', id: callId, name: sub.name, input: sub.input };
  }
}
