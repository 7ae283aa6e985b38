import type { ResultContent } from './messages.js';
import type { ToolDisplay } from './tool.js';
import type { InjectedReport } from './wording.js';

/**
 * Everything that can wake a thread arrives as one InputMessage on its queue. `id` is the stable
 * dedup key: delivering the same id twice has the effect of delivering it once.
 */
export interface InputMessage {
  id: string;
  threadId: string;
  body: InputBody;
}

export type InputBody =
  | UserTextInput
  | ToolResultInput
  | EventInput
  | ReportInput
  | ParentMessageInput
  | CompactionInput
  | CompactionCompleteInput;

/** Inputs that wait while the thread's active (non-passive) call is pending. */
export type DeferrableInput = EventInput | ReportInput | ParentMessageInput;

export interface UserTextInput {
  kind: 'user_text';
  text: string;
}

export interface ToolResultInput {
  kind: 'tool_result';
  toolUseId: string;
  content: ResultContent[];
  isError?: boolean;
  /** The result starts a subscription owned by the thread (its events follow later). */
  subscription?: boolean;
  /** For UIs only: what the tool gave them to show (not stored in history). */
  display?: ToolDisplay;
}

/** An event of a subscription started by the call `toolUseId` (a result flagged `subscription`). */
export interface EventInput {
  kind: 'event';
  toolUseId: string;
  content: ResultContent[];
  isError?: boolean;
  /** The subscription's last event. */
  final?: boolean;
  /** For UIs only: what the tool gave them to show (not stored in history). */
  display?: ToolDisplay;
  /**
   * Associative: appended to the subscribing thread's own history. Otherwise threaded: handled by
   * an ephemeral child thread, leaving the subscriber's history untouched unless the child reports.
   */
  associative?: boolean;
  /** Waits for something else to wake the thread (see ToolEvent.quiet). */
  quiet?: boolean;
}

/** A child's report (or its closing notice), shown on the parent's `spawn_thread` call. */
export interface ReportInput {
  kind: 'report';
  spawnCallId: string;
  childThreadId: string;
  /** What the parent's model reads: the runtime's framing, the report, the reviewer's note. */
  text: string;
  /**
   * The same for UIs, without the framing (see InjectedReport). Absent in inputs queued by an
   * older version: the report is then read back from `text`.
   */
  report?: InjectedReport;
  /** Structured data for UIs (the CLI attaches the child's diff); not shown to the model. */
  attachment?: unknown;
}

/** A message from the parent, shown on the child's own `spawn_thread` call. */
export interface ParentMessageInput {
  kind: 'parent_message';
  /** What the child's model reads (framed). */
  text: string;
  /** The parent's own words, for UIs; absent in inputs queued by an older version. */
  message?: string;
}

/** Start compacting the thread's history. */
export interface CompactionInput {
  kind: 'compaction';
}

/** A compaction child finished: its summary is stored; reload history through it. */
export interface CompactionCompleteInput {
  kind: 'compaction_complete';
  childThreadId: string;
}

export function isDeferrable(body: InputBody): body is DeferrableInput {
  return body.kind === 'event' || body.kind === 'report' || body.kind === 'parent_message';
}

export function userText(threadId: string, textValue: string, id: string): InputMessage {
  return { id, threadId, body: { kind: 'user_text', text: textValue } };
}

/** A tool result's dedup id is its call id: one call has one result. */
export function toolResult(
  threadId: string,
  toolUseId: string,
  content: ResultContent[],
  opts: { isError?: boolean; subscription?: boolean; id?: string; display?: ToolDisplay } = {},
): InputMessage {
  const body: ToolResultInput = { kind: 'tool_result', toolUseId, content };
  if (opts.isError) body.isError = true;
  if (opts.subscription) body.subscription = true;
  if (opts.display) body.display = opts.display;
  return { id: opts.id ?? toolUseId, threadId, body };
}
