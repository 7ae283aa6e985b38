// Drives the coding tools through the real runtime (LocalSystem, a real store) with a scripted
// model: the only test double is the brain, which decides what the model "says".
import { randomUUID } from 'node:crypto';
import {
  LocalSystem,
  MemoryStore,
  ScriptedProvider,
  SqliteStore,
  type Brain,
  type CompletionRequest,
  type HistoryMessage,
  type ResultContent,
  type RuntimeEvent,
  type RuntimeStore,
  type ScriptedReply,
  type ToolDisplay,
} from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { codingTools, type CodingToolsSetup, type ExecuteCommandTool } from '../index.js';

export interface AgentOptions extends Partial<CodingToolsSetup> {
  sandboxFor: (threadId: string) => Promise<Sandbox>;
  /** The model's decisions; by default `oneCallBrain`. */
  brain?: Brain;
  /** SQLite file path: use the SQLite store instead of the in-memory one. */
  sqlitePath?: string;
}

export interface ToolAnswer {
  callId: string;
  content: ResultContent[];
  isError: boolean;
  /** Text blocks joined (images left out). */
  text: string;
  /** What the tool gave UIs to show. */
  display?: ToolDisplay;
}

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, initTimeoutMs: 5_000, stallTimeoutMs: 5_000 };

/** A LocalSystem with the coding tools, its events recorded. */
export class ToolAgent {
  readonly system: LocalSystem;
  readonly store: RuntimeStore;
  readonly events: RuntimeEvent[] = [];
  readonly exec: ExecuteCommandTool;
  private readonly listeners = new Set<(e: RuntimeEvent) => void>();

  constructor(opts: AgentOptions) {
    const { brain, sqlitePath, ...toolOpts } = opts;
    // Sandboxes can't confine commands on every machine; these tests are about what commands do,
    // the gate has tests of its own (command-gate.test.ts).
    const { tools, executeCommand } = codingTools({ uncontained: { kind: 'allow' }, ...toolOpts });
    this.exec = executeCommand;
    this.store = sqlitePath ? new SqliteStore({ path: sqlitePath }) : new MemoryStore();
    this.system = new LocalSystem({
      store: this.store,
      provider: new ScriptedProvider(brain ?? oneCallBrain),
      tools,
      model: 'scripted-model',
      retry: FAST_RETRY,
    });
    this.system.subscribe((e) => {
      this.events.push(e);
      for (const l of this.listeners) l(e);
    });
  }

  /** One tool call by a fresh thread, answered through the runtime like a model's call. */
  async call(name: string, input: Record<string, unknown>, threadId = `t-${randomUUID()}`): Promise<ToolAnswer> {
    const callId = `toolu_${randomUUID()}`;
    await this.system.sendUserText(threadId, `CALL ${JSON.stringify({ name, input, id: callId })}`);
    await this.system.whenIdle();
    return this.answer(callId);
  }

  /** The tool result the thread received for `callId`. */
  answer(callId: string): ToolAnswer {
    const e = this.events.find((x) => x.type === 'tool-result' && x.toolUseId === callId);
    if (!e || e.type !== 'tool-result') throw new Error(`no result for ${callId}`);
    return { callId, content: e.content, isError: e.isError, text: textOf(e.content), ...(e.display ? { display: e.display } : {}) };
  }

  /** Resolves with the first event (past or future) that satisfies `pred`. */
  waitFor<T extends RuntimeEvent>(pred: (e: RuntimeEvent) => e is T): Promise<T>;
  waitFor(pred: (e: RuntimeEvent) => boolean): Promise<RuntimeEvent>;
  waitFor(pred: (e: RuntimeEvent) => boolean): Promise<RuntimeEvent> {
    const seen = this.events.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const l = (e: RuntimeEvent): void => {
        if (!pred(e)) return;
        this.listeners.delete(l);
        resolve(e);
      };
      this.listeners.add(l);
    });
  }

  async close(): Promise<void> {
    await this.system.close();
  }
}

export function textOf(content: readonly ResultContent[]): string {
  return content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

const lastMessage = (r: CompletionRequest): HistoryMessage => r.messages[r.messages.length - 1];

/** Calls the tool named in a `CALL {...}` user message, then ends its turn. */
export function oneCallBrain(r: CompletionRequest): ScriptedReply {
  const last = lastMessage(r);
  const block = last.content[0];
  if (last.role === 'user' && block?.type === 'text' && block.text.startsWith('CALL ')) {
    const call = JSON.parse(block.text.slice(5)) as { name: string; input: Record<string, unknown>; id: string };
    return { toolCall: call };
  }
  return { text: 'ok' };
}

/** The text of the last tool result in a request (what the model just received). */
export function lastResultText(r: CompletionRequest): string {
  for (const b of lastMessage(r).content) if (b.type === 'tool_result') return textOf(b.content);
  return '';
}
