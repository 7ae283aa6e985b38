// Drives the runtime the same way in local and step mode, over either store, so one suite proves
// both modes. Not part of the package's build.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RuntimeEvent } from '../events.js';
import type { InputMessage } from '../input.js';
import type { HistoryMessage } from '../messages.js';
import { LocalSystem } from '../local-system.js';
import { MemoryStore } from '../memory-store.js';
import { ScriptedProvider, type Brain } from '../scripted-provider.js';
import { SqliteStore } from '../sqlite-store.js';
import { StepSystem } from '../step-system.js';
import { threadStackOf } from '../thread-identity.js';
import type { RuntimeStore } from '../store.js';
import type { SystemOptions } from '../system-options.js';
import type { Tool } from '../tool.js';

export type StoreKind = 'memory' | 'sqlite';
export type Mode = 'local' | 'step';

export interface Harness {
  store: RuntimeStore;
  events: RuntimeEvent[];
  send(...inputs: InputMessage[]): Promise<void>;
  /** Run until nothing is queued, running or awaiting a tool result. */
  settle(): Promise<void>;
  /** Run until no slice runs or is queued; tools may still be working. */
  settleSlices(): Promise<void>;
  /** Run slices until an event matching `seen` has been emitted (tools answer meanwhile). */
  settleUntil(seen: (e: RuntimeEvent) => boolean): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  brain: Brain;
  tools?: Tool[];
  system?: Partial<SystemOptions>;
}

export function tempDir(prefix = 'ic-runtime-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function makeStore(kind: StoreKind): { store: RuntimeStore; cleanup(): void } {
  if (kind === 'memory') return { store: new MemoryStore(), cleanup() {} };
  const dir = tempDir();
  return {
    store: new SqliteStore({ path: join(dir, 'state.db') }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, initTimeoutMs: 5_000, stallTimeoutMs: 5_000 };

export function makeHarness(mode: Mode, storeKind: StoreKind, opts: HarnessOptions): Harness {
  const { store, cleanup } = makeStore(storeKind);
  const base = {
    store,
    provider: new ScriptedProvider(opts.brain),
    tools: opts.tools ?? [],
    model: 'scripted-model',
    retry: FAST_RETRY,
    ...opts.system,
  };
  const events: RuntimeEvent[] = [];
  // Woken by every event and every queued input: what settleUntil waits on, instead of a timer.
  let changed: Array<() => void> = [];
  const notify = (): void => {
    const ready = changed;
    changed = [];
    for (const resolve of ready) resolve();
  };
  const nextChange = () => new Promise<void>((resolve) => changed.push(resolve));
  const settleUntil = async (h: Pick<Harness, 'settleSlices'>, seen: (e: RuntimeEvent) => boolean) => {
    for (;;) {
      const change = nextChange();
      await h.settleSlices();
      if (events.some(seen)) return;
      await change;
    }
  };
  if (mode === 'local') {
    const system = new LocalSystem(base);
    system.subscribe((e) => {
      events.push(e);
      notify();
    });
    return {
      store,
      events,
      async send(...inputs) {
        await system.send(inputs);
      },
      settle: () => system.whenIdle(),
      settleSlices: () => system.whenIdle({ ignoreRunningTools: true }),
      settleUntil(seen) {
        return settleUntil(this, seen);
      },
      async close() {
        await system.close();
        cleanup();
      },
    };
  }
  // Step mode: the harness is the host queue.
  const queue: InputMessage[] = [];
  const awaiting = new Set<string>();
  // A tool may answer inside its dispatch, before the dispatched event: not awaited then.
  const answered = new Set<string>();
  let wake: (() => void) | null = null;
  const system = new StepSystem({
    ...base,
    async send(input) {
      if (input.body.kind === 'tool_result') {
        awaiting.delete(input.body.toolUseId);
        answered.add(input.body.toolUseId);
      }
      queue.push(input);
      wake?.();
      notify();
    },
  });
  system.subscribe((e) => {
    events.push(e);
    if (e.type === 'tool-dispatched' && !answered.has(e.callId)) awaiting.add(e.callId);
    // A call the runtime moved to the background was answered by it.
    if (e.type === 'tool-result' && e.subscription) awaiting.delete(e.toolUseId);
    notify();
  });
  return {
    store,
    events,
    async send(...inputs) {
      queue.push(...inputs);
    },
    async settleSlices() {
      while (queue.length > 0) await system.step(queue.splice(0));
    },
    settleUntil(seen) {
      return settleUntil(this, seen);
    },
    async settle() {
      for (;;) {
        if (queue.length > 0) {
          await system.step(queue.splice(0));
          continue;
        }
        if (awaiting.size === 0) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    },
    async close() {
      await store.close();
      cleanup();
    },
  };
}

/** Role/kind summary of a history, for readable assertions. */
export function shape(history: readonly { role: string; content: Array<{ type: string }> }[]): string[] {
  return history.map((m) => `${m.role}:${m.content.map((c) => c.type).join('+')}`);
}

/** The thread a request is for: its last identity line. */
export function threadOf(r: { system: string; messages: readonly HistoryMessage[] }): { id: string; stack: string[] } {
  const stack = threadStackOf(r);
  if (!stack) throw new Error('request without a thread identity line');
  return { id: stack.at(-1)!, stack };
}

/** Text of the blocks of the last message (tool results flattened). */
export function lastText(r: { messages: readonly HistoryMessage[] }): string {
  const last = r.messages[r.messages.length - 1];
  if (!last) return '';
  return last.content
    .map((b) => {
      if (b.type === 'text') return b.text;
      if (b.type === 'tool_result') return b.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      return '';
    })
    .join('\n');
}

/** Every tool_use block of a history, in order. */
export function toolUses(history: readonly { content: Array<{ type: string }> }[]) {
  return history.flatMap((m) => m.content).filter((b): b is { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> } => b.type === 'tool_use');
}
