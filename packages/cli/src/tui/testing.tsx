// Test rig for the TUI: the real App over a real LocalSystem (memory store, scripted brain),
// rendered by ink-testing-library. Used only by the *.test.tsx files next to it.
import { stripVTControlCharacters } from 'node:util';
import {
  LocalSystem,
  MemoryStore,
  ScriptedProvider,
  threadStackOf,
  type AsyncTool,
  type Brain,
  type CompletionRequest,
  type HistoryMessage,
  type RuntimeEvent,
  type SystemOptions,
  type Tool,
} from '@infinity-code/runtime';
import { DEFAULT_MODEL } from '@infinity-code/runtime/models';
import { render } from 'ink-testing-library';
import { act } from 'react';
import type { Pricing } from '../pricing.js';
import type { PromptWorkspace } from '../prompt-workspace.js';
import { App } from './app.js';
import type { CommandApprovals } from './command-approvals.js';
import type { TuiController } from './controller.js';
import { localController, type SessionHooks } from './local-controller.js';
import { MarkdownContext, type MarkdownContextValue } from './markdown.js';
import { markdownLines } from './markdown-lines.js';
import { createReviewBroker, type ReviewBrokerOptions } from './review-broker.js';
import { createUiStore, type UiStore } from './store.js';
import type { UiState } from './ui-state.js';

export const ROOT = 'root';
/** The renderer at once (the CLI loads it after the first frame); code uncoloured, sparing each test the grammars. */
const MARKDOWN: MarkdownContextValue = { color: true, renderer: { render: markdownLines } };
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, initTimeoutMs: 5_000, stallTimeoutMs: 5_000 };

export interface RigOptions {
  brain: Brain;
  tools?: Tool[];
  model?: string;
  /** What the status line divides by. */
  contextWindow?: number;
  hooks?: SessionHooks;
  /** Children's reports are reviewed: how to get a child's diff and apply a decision. */
  review?: ReviewBrokerOptions;
  /** Where commands wait for the user's yes or no (the tools must ask through it too). */
  approvals?: CommandApprovals;
  system?: Partial<SystemOptions>;
  /** Prices for the status line and /cost (the built-in ones by default). */
  pricing?: Pricing;
  /** The repository the prompt reads (project commands, `@` mentions); none by default. */
  workspace?: PromptWorkspace;
}

export interface Rig {
  system: LocalSystem;
  controller: TuiController;
  store: UiStore;
  /** Every runtime event so far. */
  events: RuntimeEvent[];
  /** The screen as text (colours stripped). */
  frame(): string;
  /** Keys or text to the terminal, with React's work flushed. */
  press(...keys: string[]): Promise<void>;
  /** Type a line and press Enter. */
  submit(line: string): Promise<void>;
  /** Wait, with React flushed, for the runtime to be idle. */
  settle(opts?: { ignoreRunningTools?: boolean }): Promise<void>;
  /** Wait until the UI state satisfies `match` (it may already). */
  untilState(match: (s: UiState) => boolean): Promise<void>;
  /** Wait for a runtime event matching `match` (already seen ones count). */
  until(match: (e: RuntimeEvent) => boolean): Promise<RuntimeEvent>;
  /** Run `f` inside act() so the screen catches up with what it caused. */
  run<T>(f: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function startRig(o: RigOptions): Promise<Rig> {
  // Lets act() flush React's work for Ink's custom renderer, so frames are read after it.
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
  const model = o.model ?? DEFAULT_MODEL;
  const reviews = o.review ? createReviewBroker(o.review) : undefined;
  const runtimeStore = o.system?.store ?? new MemoryStore();
  const system = new LocalSystem({
    ...(reviews ? { reviewReport: reviews.reviewer } : {}),
    store: runtimeStore,
    provider: new ScriptedProvider(o.brain),
    tools: o.tools ?? [],
    model,
    retry: FAST_RETRY,
    ...o.system,
  });
  const events: RuntimeEvent[] = [];
  const waiters: Array<{ match: (e: RuntimeEvent) => boolean; resolve: (e: RuntimeEvent) => void }> = [];
  system.subscribe((e) => {
    events.push(e);
    for (const w of waiters.splice(0)) {
      if (w.match(e)) w.resolve(e);
      else waiters.push(w);
    }
  });
  const controller = localController({
    system,
    rootThreadId: ROOT,
    ...(reviews ? { reviews } : {}),
    ...(o.approvals ? { approvals: o.approvals } : {}),
    ...(o.hooks ? { hooks: o.hooks } : {}),
  });
  const store = createUiStore(controller, {
    model,
    contextWindow: o.contextWindow ?? 200_000,
    backend: 'overlay',
    sessionId: ROOT,
    ...(o.pricing ? { pricing: o.pricing } : {}),
  });
  await system.start();
  let ui!: ReturnType<typeof render>;
  await act(async () => {
    ui = render(
      <MarkdownContext.Provider value={MARKDOWN}>
        <App store={store} controller={controller} animate={false} {...(o.workspace ? { workspace: o.workspace } : {})} />
      </MarkdownContext.Provider>,
    );
  });
  let closed = false;
  const run = async <T,>(f: () => Promise<T>): Promise<T> => {
    let out!: T;
    await act(async () => {
      out = await f();
    });
    return out;
  };
  const press = async (...keys: string[]) => {
    for (const k of keys) await run(async () => void ui.stdin.write(k));
  };
  return {
    system,
    controller,
    store,
    events,
    frame: () => stripVTControlCharacters(ui.lastFrame() ?? ''),
    press,
    submit: async (line) => press(line, '\r'),
    settle: (opts) => run(() => system.whenIdle(opts)),
    until: (match) =>
      run(() => {
        const seen = events.find(match);
        return seen ? Promise.resolve(seen) : new Promise<RuntimeEvent>((resolve) => waiters.push({ match, resolve }));
      }),
    untilState: (match) =>
      run(
        () =>
          new Promise<void>((resolve) => {
            if (match(store.getState())) return resolve();
            const off = store.subscribe(() => {
              if (!match(store.getState())) return;
              off();
              resolve();
            });
          }),
      ),
    run,
    async close() {
      if (closed) return;
      closed = true;
      await act(async () => ui.unmount());
      await system.close().catch(() => {});
    },
  };
}

/** The thread a request is for: its last identity line. */
export function threadOf(r: CompletionRequest): { id: string; stack: string[] } {
  const stack = threadStackOf(r);
  if (!stack) throw new Error('request without a thread identity line');
  return { id: stack.at(-1)!, stack };
}

/** Text of the blocks of a request's last message (tool results flattened). */
export function lastText(r: CompletionRequest): string {
  const last = r.messages[r.messages.length - 1];
  return last ? requestText([last]) : '';
}

/** All text of a request's history (user text, results, injected events), for assertions. */
export function requestText(messages: readonly HistoryMessage[]): string {
  return messages
    .flatMap((m) => m.content)
    .map((b) => {
      if (b.type === 'text') return b.text;
      if (b.type === 'tool_result') return b.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      return '';
    })
    .join('\n');
}

/** An async tool that answers only when the test says so (a long-running command). */
export function heldTool(name = 'run_tests', display = '$ npm test'): AsyncTool & { answer(text: string, isError?: boolean): Promise<void> } {
  const held: Array<(text: string, isError: boolean) => Promise<void>> = [];
  return {
    kind: 'async',
    name,
    description: 'Run something slow.',
    input_schema: { type: 'object', properties: {} },
    display: () => display,
    dispatch(_input, ctx) {
      held.push((text, isError) => ctx.respond({ content: text, isError }));
    },
    async answer(text, isError = false) {
      const respond = held.shift();
      if (!respond) throw new Error(`${name} has no call waiting`);
      await respond(text, isError);
    },
  };
}

/**
 * A reply streamed in two parts, the second held until `release()`: the frame while a completion
 * runs can be read, and a stop sent, before it ends.
 */
export function heldStream(first: string, second: string): { stream: AsyncGenerator<string>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  async function* stream() {
    yield first;
    // The scripted provider notices an abort at its next chunk.
    await gate;
    yield second;
  }
  return { stream: stream(), release };
}
