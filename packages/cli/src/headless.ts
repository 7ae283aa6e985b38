import { addUsage, resultText, ZERO_USAGE, type RuntimeEvent, type Usage } from '@infinity-code/runtime';

export interface HeadlessWriters {
  out(text: string): void;
  err(text: string): void;
}

/** What a headless run learns from the event stream (for the exit code and the result object). */
export interface RunTally {
  errors: Array<{ kind: string; message: string }>;
  completions: number;
  usage: Usage;
  /**
   * The same, per model the completions ran on (each is priced with its own), with each
   * completion's usage: a price tier (Haiku 5.5's short prompts) is chosen per completion.
   */
  byModel: Map<string, { completions: number; usage: Usage; each: Usage[] }>;
  /** The root thread's last answer. */
  answer: string;
}

export function newTally(): RunTally {
  return { errors: [], completions: 0, usage: { ...ZERO_USAGE }, byModel: new Map(), answer: '' };
}

/** Folds an event into the tally (pure apart from the object it updates). */
export function tallyEvent(t: RunTally, e: RuntimeEvent, rootId: string): void {
  if (e.type === 'completion-finished') {
    t.completions++;
    t.usage = addUsage(t.usage, e.usage);
    const m = t.byModel.get(e.model);
    if (m) {
      m.completions++;
      m.usage = addUsage(m.usage, e.usage);
      m.each.push(e.usage);
    } else {
      t.byModel.set(e.model, { completions: 1, usage: e.usage, each: [e.usage] });
    }
  } else if (e.type === 'error') {
    t.errors.push({ kind: e.kind, message: e.message });
  } else if (e.type === 'completion-started' && e.threadId === rootId) {
    // A reply the output limit cut goes on in the next completion: one answer.
    if (e.continues !== true) t.answer = '';
  } else if (e.type === 'text-delta' && e.threadId === rootId) {
    t.answer += e.text;
  } else if (e.type === 'completion-retry' && e.threadId === rootId) {
    t.answer = '';
  }
}

/**
 * The text format: the root thread's answer goes to stdout, progress (tool calls, results,
 * children, retries, errors) to stderr. The answer is written per committed turn: text streamed
 * by an attempt that then failed and was retried never reaches stdout. Rendering only.
 */
export function textPrinter(w: HeadlessWriters, rootId: string): (e: RuntimeEvent) => void {
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    w.out(pending.endsWith('\n') ? pending : `${pending}\n`);
    pending = '';
  };
  const who = (threadId: string) => (threadId === rootId ? '' : `[${threadId.slice(0, 10)}] `);
  return (e) => {
    switch (e.type) {
      case 'text-delta':
        if (e.threadId === rootId) pending += e.text;
        return;
      case 'completion-retry':
        if (e.threadId === rootId) pending = '';
        // The quick retries of an API never reached are not news: its one error says it all.
        if (e.kind === 'unreachable') return;
        w.err(`${who(e.threadId)}  … ${e.message} Retrying in ${(e.delayMs / 1000).toFixed(1)}s (attempt ${e.attempt}).\n`);
        return;
      case 'turn-committed':
      case 'slice-finished':
        if (e.threadId === rootId) flush();
        return;
      case 'tool-call':
        w.err(`${who(e.threadId)}● ${e.display ?? `${e.call.name} ${JSON.stringify(e.call.input)}`}\n`);
        return;
      case 'tool-result': {
        // What the tool gave UIs to show, or the first line of what the model reads.
        const first = e.display?.summary ?? resultText(e.content).split('\n')[0] ?? '';
        w.err(`${who(e.threadId)}  ${e.isError ? '✗' : '⎿'} ${first.length > 120 ? `${first.slice(0, 117)}...` : first}\n`);
        return;
      }
      case 'thread-spawned':
        if (e.kind === 'child') w.err(`${who(e.threadId)}  ↳ spawned thread ${e.childId}\n`);
        return;
      case 'completion-finished':
        // The model's progress notes between tool calls (thinking it chose to show), before its calls.
        for (const b of e.content ?? []) {
          if (b.type !== 'thinking' || b.thinking.trim() === '') continue;
          for (const line of b.thinking.trim().split('\n')) w.err(`${who(e.threadId)}✻ ${line}\n`);
        }
        return;
      case 'event-injected':
        if (e.source === 'report') w.err(`${who(e.threadId)}  ◆ report from ${e.childThreadId ?? 'a child'}\n`);
        else if (e.source === 'event') {
          const first = e.display?.summary ?? resultText(e.content).trim().split('\n').slice(-1)[0] ?? '';
          w.err(`${who(e.threadId)}  ⋯ ${first.length > 120 ? `${first.slice(0, 117)}...` : first}\n`);
        }
        return;
      case 'error':
        w.err(`${who(e.threadId)}Error: ${e.message}\n`);
        return;
      default:
        return;
    }
  };
}
