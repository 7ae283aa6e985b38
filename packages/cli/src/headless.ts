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
  /** Why the root's last reply ended (the API's stop_reason); null before any, or when it was cancelled. */
  stopReason: string | null;
  /** Time spent on the API, every thread's completions summed (Claude Code's duration_api_ms). */
  apiMs: number;
  /** Tool calls the run's permissions refused, in Claude Code's shape. */
  permissionDenials: PermissionDenial[];
}

export interface PermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: Record<string, unknown>;
}

export function newTally(): RunTally {
  return { errors: [], completions: 0, usage: { ...ZERO_USAGE }, byModel: new Map(), answer: '', stopReason: null, apiMs: 0, permissionDenials: [] };
}

/** Folds an event into the tally (pure apart from the object it updates). */
export function tallyEvent(t: RunTally, e: RuntimeEvent, rootId: string): void {
  if (e.type === 'completion-finished') {
    t.completions++;
    t.usage = addUsage(t.usage, e.usage);
    t.apiMs += e.durationMs ?? 0;
    if (e.threadId === rootId) t.stopReason = e.stopReason ?? null;
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
  } else if (e.type === 'tool-denied') {
    // Every thread's: a child's refused call is the run's too.
    t.permissionDenials.push({ tool_name: e.call.name, tool_use_id: e.call.id, tool_input: e.call.input });
  }
}

/**
 * The text format's stderr. As Claude Code's `-p`, stdout gets the root thread's final answer
 * alone, once the run is done (runHeadless writes it); stderr gets errors, and with `verbose` the
 * progress: tool calls, results, children, retries, the model's notes, and the root's replies
 * that turned out not to be its last. Rendering only.
 */
export function textPrinter(w: HeadlessWriters, rootId: string, opts: { verbose: boolean } = { verbose: false }): (e: RuntimeEvent) => void {
  // The root's last reply without tool calls: its answer, unless another reply follows.
  let said = '';
  const who = (threadId: string) => (threadId === rootId ? '' : `[${threadId.slice(0, 10)}] `);
  const narrate = (text: string) => {
    const t = text.trim();
    if (t !== '') w.err(`${t}\n`);
  };
  return (e) => {
    if (e.type === 'error') {
      w.err(`${who(e.threadId)}Error: ${e.message}\n`);
      return;
    }
    if (!opts.verbose) return;
    switch (e.type) {
      case 'completion-started':
        // A reply cut by the output limit goes on in this one: the same answer.
        if (e.threadId === rootId && e.continues !== true) {
          narrate(said);
          said = '';
        }
        return;
      case 'completion-retry':
        // The quick retries of an API never reached are not news: its one error says it all.
        if (e.kind === 'unreachable') return;
        w.err(`${who(e.threadId)}  … ${e.message} Retrying in ${(e.delayMs / 1000).toFixed(1)}s (attempt ${e.attempt}).\n`);
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
      case 'completion-finished': {
        // The model's progress notes between tool calls (thinking it chose to show), before its calls.
        for (const b of e.content ?? []) {
          if (b.type !== 'thinking' || b.thinking.trim() === '') continue;
          for (const line of b.thinking.trim().split('\n')) w.err(`${who(e.threadId)}✻ ${line}\n`);
        }
        if (e.threadId !== rootId) return;
        // Words before tool calls are narration; a reply without calls may be the answer (told
        // when the next reply begins, if one does).
        const text = (e.content ?? []).flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
        if ((e.content ?? []).some((b) => b.type === 'tool_use')) narrate(text);
        else said += text;
        return;
      }
      case 'event-injected':
        if (e.source === 'report') w.err(`${who(e.threadId)}  ◆ report from ${e.childThreadId ?? 'a child'}\n`);
        else if (e.source === 'event') {
          const first = e.display?.summary ?? resultText(e.content).trim().split('\n').slice(-1)[0] ?? '';
          w.err(`${who(e.threadId)}  ⋯ ${first.length > 120 ? `${first.slice(0, 117)}...` : first}\n`);
        }
        return;
      case 'compaction-applied':
      case 'compaction-started':
      case 'completion-silence':
      case 'input-accepted':
      case 'input-deferred':
      case 'input-dropped':
      case 'slice-finished':
      case 'slice-started':
      case 'text-delta':
      case 'thinking-delta':
      case 'thread-closed':
      case 'tool-call-streaming':
      case 'tool-denied':
      case 'tool-dispatched':
      case 'tool-interrupted':
      case 'tool-progress':
      case 'turn-committed':
        return;
    }
  };
}
