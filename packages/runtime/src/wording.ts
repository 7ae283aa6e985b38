import { stackLine, withoutStackLine } from './thread-identity.js';

/**
 * The runtime's own words to the model about what it puts into a thread's history: how a child's
 * report, a closing, a parent's message and a compaction summary are framed, and what a call
 * ended by new input gets as its result. Kept in one place with their readers, which are built
 * from the same phrases: a UI replaying a stored history asks the runtime to read it
 * (history-reading.ts) instead of matching these words itself, so rewording one here can't
 * silently break a reader elsewhere.
 */
export interface Phrases {
  /** Heads a child's `report_to_parent`. */
  childReport: string;
  /** Heads a child's closing report; `{child}` is its id. */
  childClosedWithReport: string;
  /** The whole notice of a child that closed without a report; `{child}` is its id. */
  childClosed: string;
  /** Heads a `report_to_parent` of an event thread (an ephemeral child handling one event). */
  eventReport: string;
  /** Heads an event thread's closing report; `{subscription}` is the subscribing call's id. */
  eventClosedWithReport: string;
  /** Heads a parent's `send_message_to_child`, as the child reads it. */
  parentMessage: string;
  /** Heads a compaction summary, which stands for the history it replaces. */
  summary: string;
  /** The result of an active call that the user's message interrupted. */
  interruptedByUser: string;
  /** The result of a passive wait (sleep) that new input ended: what it waited for. */
  wokenByInput: string;
  /** The result of a call that was running when the process stopped. */
  interruptedByRestart: string;
  /** The result of `spawn_thread`, to the spawning thread; `{child}` is the new thread's id. */
  spawned: string;
}

export const DEFAULT_PHRASES: Readonly<Phrases> = Object.freeze({
  childReport: 'Report from child thread: ',
  childClosedWithReport: 'Child thread with ID {child} has shut down. Report from child thread: ',
  childClosed: 'Child thread with ID {child} has shut down',
  eventReport: 'Report from temporary child thread created to process a subscription event:\n',
  eventClosedWithReport:
    'An event from your subscription {subscription} was processed by a child thread {child}. ' +
    'The subscription remains active. Report from the child:\n',
  parentMessage: 'Message from parent thread: ',
  summary: '[Summary of the conversation so far]\n',
  interruptedByUser: 'Tool call interrupted by user',
  wokenByInput: 'The wait ended early: new input arrived.',
  interruptedByRestart:
    'Error: this tool call was interrupted because Infinity Code stopped while it ran; it may have ' +
    'partly run. Check its effects before running it again.',
  spawned: "Spawned thread {child}. It works in parallel; its reports will arrive on this call. Don't do its task yourself.",
});

/**
 * What the runtime tells the model when a reply stopped short (slice.ts). No reader parses them
 * back, so they are not Phrases.
 */
export const STOP_PHRASES = Object.freeze({
  /** The result of a tool call the output limit cut mid-arguments (never run); `{limit}` in tokens. */
  callCut:
    'Error: your reply reached the output limit ({limit} tokens) while writing the arguments of this call, so ' +
    'they were cut off and the call was not run. Make it again with less content in one call: split a large ' +
    'file into parts (create it with the first part, then add the rest with further edits), or a long command ' +
    'into several.',
  /** Asks the model to go on with an answer the output limit cut. */
  replyCut: 'Your previous reply reached the output limit and was cut off. Continue exactly where it stopped.',
  /** Asks the model to go on after the context filled up and the conversation was compacted. */
  contextFull:
    'Your previous reply was cut off because the context window is full. The conversation has been summarised; ' +
    'continue the task from where it stopped.',
});

/**
 * The result of a call the user's message reached while it ran, when its tool keeps it going
 * instead (a command): `{call}` is the call's id, which its events arrive on.
 */
export const MOVED_TO_BACKGROUND =
  '[The user sent a message while this ran; it goes on in the background (subscription id: {call}). You will be ' +
  'woken with its output and exit code when it ends; stop it with cancel_subscription if it is no longer wanted.]';

/**
 * What the runtime says to the model about compaction: the compaction thread's instructions, and
 * the verbatim record it keeps next to a summary (frameRecord). Only the record's head is read
 * back (readSummary leaves the record out), so the rest are not Phrases.
 */
export const COMPACTION_PHRASES = Object.freeze({
  /** The compaction thread's instructions (its only input, as its call's result). */
  instructions:
    'You are inside a compaction thread holding the whole conversation above. Your summary will replace the ' +
    'older part of it, so write what the work needs to go on without it. The runtime keeps the user\'s own ' +
    'messages word for word next to your summary, and may keep the latest turns as they were after it: refer to them, ' +
    "don't copy them. Use these headings, in this order; be brief and exact (paths, names, commands, error " +
    'messages), and write "None." under a heading with nothing to say.\n' +
    '## Goal\nWhat the user wants overall, with the constraints and preferences they set.\n' +
    '## Current work\nWhat was being done just before this point, precisely, and the state it was left in.\n' +
    '## Next step\nThe next action the latest request calls for ("None." if the task is finished). No work nobody asked for.\n' +
    '## Files\nEach file read, created or changed that still matters: its path, and what was done or learned there.\n' +
    '## Errors\nErrors met: how each was fixed, and which are still open (with their messages).\n' +
    '## Decisions\nChoices made and why, and facts learned that the rest of the work needs (commands that work, APIs, conventions).\n' +
    '## Pending\nOther tasks asked for and not done yet.\n' +
    'Reply with the summary only, as plain text, without calling tools.',
  /** Heads the verbatim record; readSummary finds the record by it. */
  recordHead: '[Kept word for word by the runtime]',
  /** Heads a child thread's task (its spawn instructions) in the record. */
  task: 'The task this thread was given when it was spawned:',
  /** Heads the user's messages in the record. */
  userMessages: "The user's messages up to this point, oldest first:",
  /** Stands where messages were left out; `{count}` of them. */
  userMessagesLeftOut: '[{count} more messages of the user were here, left out for length]',
  /** Stands inside a message cut for length; `{count}` characters. */
  charactersLeftOut: '[... {count} characters left out ...]',
});

/** What the verbatim record next to a summary holds; built by the runtime, never by the model. */
export interface SummaryRecord {
  /** A child thread's instructions, as its spawn call's result gave them. */
  task?: string;
  /** The user's messages, oldest first: `first` whole, then `leftOut` messages were dropped, then `latest`. */
  first: string[];
  leftOut: number;
  latest: string[];
}

/** The record's text ('' when it holds nothing). */
export function frameRecord(record: SummaryRecord): string {
  const parts: string[] = [];
  if (record.task !== undefined) parts.push(`${COMPACTION_PHRASES.task}\n<task>\n${record.task}\n</task>`);
  if (record.first.length + record.latest.length > 0) {
    const lines = [COMPACTION_PHRASES.userMessages, ...record.first.map(userMessage)];
    if (record.leftOut > 0) lines.push(COMPACTION_PHRASES.userMessagesLeftOut.replace('{count}', String(record.leftOut)));
    lines.push(...record.latest.map(userMessage));
    parts.push(lines.join('\n'));
  }
  return parts.length === 0 ? '' : `${COMPACTION_PHRASES.recordHead}\n${parts.join('\n\n')}`;
}

function userMessage(text: string): string {
  return `<user_message>\n${text}\n</user_message>`;
}

/**
 * A summary's text without the record after it. The last head counts: the model's summary may
 * quote an earlier summary's record (it read one), the user's own words hardly ever hold it.
 */
function withoutRecord(text: string): string {
  const at = text.lastIndexOf(`\n\n${COMPACTION_PHRASES.recordHead}\n`);
  return at < 0 ? text : text.slice(0, at);
}

/** A child's report as UIs show it: its own words, without the framing its parent's model reads. */
export interface InjectedReport {
  /**
   * What the child said (empty when it closed without a report). Read back from a stored history,
   * a closing report's text also holds the note after it: the two can't be told apart there.
   */
  text: string;
  /** What the parent's model read after the report (the CLI's review verdict). */
  note?: string;
  /** The child closed with this report. */
  closed: boolean;
  /** `event`: an ephemeral thread that handled one subscription event. */
  from: 'child' | 'event';
  /** The reporting child, when the framing names it. */
  childThreadId?: string;
}

/** Which framing a report gets: who sends it, and whether it closes the child. */
export interface ReportFrame {
  from: 'child' | 'event';
  closed: boolean;
  childThreadId: string;
  /** An event thread's subscription (the call whose event it handled). */
  subscriptionId?: string;
}

/** The framing and its readers for one set of phrases. The names are the module's exports. */
export interface Wording {
  /** The text the parent's model reads: the framing, the report, then the reviewer's note. */
  frameReport: (frame: ReportFrame, report: string, note?: string) => string;
  /** A report's framing read back; undefined when the text is framed as no report. */
  readReport: (text: string) => InjectedReport | undefined;
  frameParentMessage: (message: string) => string;
  /** The parent's own words; undefined when the text is framed as no parent message. */
  readParentMessage: (text: string) => string | undefined;
  /**
   * A summary message's text: the model's summary, then the verbatim record the runtime keeps
   * with it (frameRecord; '' for none), and the owner's identity line last (see history-view.ts).
   */
  frameSummary: (summary: string, ownerStack: readonly string[], record?: string) => string;
  /** The model's summary alone (no record, no identity line); undefined when the text is no summary. */
  readSummary: (text: string) => string | undefined;
  /** What the spawning thread reads when its child started. */
  frameSpawned: (childThreadId: string) => string;
  /** The child's id; undefined when the text is no spawn result. */
  readSpawned: (text: string) => string | undefined;
  INTERRUPTED_BY_USER: string;
  WOKEN_BY_INPUT: string;
  INTERRUPTED_BY_RESTART: string;
}

export function wordingWith(p: Phrases): Wording {
  const closedWith = template(p.childClosedWithReport);
  const eventClosedWith = template(p.eventClosedWithReport);
  const closed = template(p.childClosed);
  const spawned = template(p.spawned);
  // Longest framings first: "has shut down" alone is the start of "has shut down. Report ...".
  const readers: Array<{ read: (text: string) => Record<string, string> | undefined; closed: boolean; from: 'child' | 'event'; silent?: boolean }> = [
    { read: closedWith.readPrefix, closed: true, from: 'child' },
    { read: eventClosedWith.readPrefix, closed: true, from: 'event' },
    { read: template(p.childReport).readPrefix, closed: false, from: 'child' },
    { read: template(p.eventReport).readPrefix, closed: false, from: 'event' },
    // A silent closing is followed by nothing but the reviewer's note.
    { read: closed.readWithNote, closed: true, from: 'child', silent: true },
  ];
  return {
    frameReport: (frame, report, note) => {
      const values = { child: frame.childThreadId, subscription: frame.subscriptionId ?? 'unknown' };
      let head: string;
      if (frame.from === 'event') head = frame.closed ? eventClosedWith.fill(values) : p.eventReport;
      else if (!frame.closed) head = p.childReport;
      else head = report === '' ? closed.fill(values) : closedWith.fill(values);
      const body = `${head}${report}`;
      return note ? `${body}\n\n${note}` : body;
    },
    readReport: (text) => {
      for (const r of readers) {
        const m = r.read(text);
        if (!m) continue;
        const report: InjectedReport = { text: r.silent ? '' : (m.rest ?? ''), closed: r.closed, from: r.from };
        if (r.silent && m.rest) report.note = m.rest;
        if (m.child !== undefined) report.childThreadId = m.child;
        return report;
      }
      return undefined;
    },
    frameParentMessage: (message) => `${p.parentMessage}${message}`,
    readParentMessage: (text) => (text.startsWith(p.parentMessage) ? text.slice(p.parentMessage.length) : undefined),
    frameSummary: (summary, ownerStack, record = '') =>
      `${p.summary}${summary}${record === '' ? '' : `\n\n${record}`}\n\n${stackLine(ownerStack)}`,
    readSummary: (text) => (text.startsWith(p.summary) ? withoutRecord(withoutStackLine(text.slice(p.summary.length))).trimEnd() : undefined),
    frameSpawned: (child) => spawned.fill({ child }),
    readSpawned: (text) => spawned.readExact(text)?.child,
    INTERRUPTED_BY_USER: p.interruptedByUser,
    WOKEN_BY_INPUT: p.wokenByInput,
    INTERRUPTED_BY_RESTART: p.interruptedByRestart,
  };
}

/**
 * A phrase with `{name}` slots: filled to frame, matched to read back (a slot holds an id, so it
 * matches a run of non-space characters).
 */
function template(phrase: string) {
  const names: string[] = [];
  const source = phrase
    .split(/\{(\w+)\}/)
    .map((part, i) => {
      if (i % 2 === 0) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(part);
      return '(\\S+?)';
    })
    .join('');
  const groups = (m: RegExpExecArray | null): Record<string, string> | undefined => {
    if (!m) return undefined;
    const out: Record<string, string> = {};
    names.forEach((n, i) => (out[n] = m[i + 1]!));
    const rest = m[names.length + 1];
    if (rest !== undefined) out.rest = rest;
    return out;
  };
  const prefix = new RegExp(`^${source}([\\s\\S]*)$`);
  const withNote = new RegExp(`^${source}(?:\\n\\n([\\s\\S]*))?$`);
  const exact = new RegExp(`^${source}$`);
  return {
    fill: (values: Record<string, string>) => phrase.replace(/\{(\w+)\}/g, (_, n: string) => values[n] ?? ''),
    readPrefix: (text: string) => groups(prefix.exec(text)),
    readWithNote: (text: string) => groups(withNote.exec(text)),
    readExact: (text: string) => groups(exact.exec(text)),
  };
}

/** The wording the runtime speaks. */
export const {
  frameReport,
  readReport,
  frameParentMessage,
  readParentMessage,
  frameSummary,
  readSummary,
  frameSpawned,
  readSpawned,
  INTERRUPTED_BY_USER,
  WOKEN_BY_INPUT,
  INTERRUPTED_BY_RESTART,
} = wordingWith(DEFAULT_PHRASES);

/**
 * The name of the synthetic call an injected event is shown as (docs/architecture.md, *Events and subscriptions*; a contract: never
 * offered as a tool, refused if the model calls it).
 */
export const INJECTED_TOOL_NAME = 'receive_event__injected';
