// What a slice does when a reply stopped short of a plain finish: the API's stop_reason read as
// the slice's next step (continue a cut answer, withhold a cut call, stop on a refusal, send a
// paused turn back, compact a full context and go on).
import type { SliceOutcome } from './events.js';
import { userTextMessage } from './history.js';
import type { StopDetails } from './provider.js';
import type { SliceDeps } from './slice.js';
import type { LoadedThread } from './store.js';
import type { Turn } from './turn.js';
import { STOP_PHRASES } from './wording.js';

/** Text answers continued after the output limit cut them, in a row, before the thread stops. */
export const MAX_CONTINUATIONS = 4;
/** pause_turn replies in a row before the thread stops. */
export const MAX_PAUSES = 8;

export type Stop = 'complete' | 'cut' | 'context-full' | 'refusal' | 'pause';

/** What a reply's stop reason asks of the slice (an unknown reason reads as a finished reply). */
export function stopOf(reason: string | null, cancelled: boolean): Stop {
  if (cancelled) return 'complete';
  switch (reason) {
    case 'max_tokens':
      return 'cut';
    case 'model_context_window_exceeded':
      return 'context-full';
    case 'refusal':
      return 'refusal';
    case 'pause_turn':
      return 'pause';
    default:
      return 'complete';
  }
}

export function refusalMessage(details: StopDetails | undefined): string {
  const category = details?.category ? ` (category: ${details.category})` : '';
  const why = details?.explanation ? `: ${details.explanation}` : '.';
  return `The model declined to continue this request${category}${why} Rephrase the task, or choose another model (--model, or /model in the TUI).`;
}

/**
 * The context filled up mid-answer: the thread is compacted, and once the summary is in, it
 * goes on (a history that ends with this unanswered message is picked up after compaction).
 */
export async function contextFull(deps: SliceDeps, thread: LoadedThread, tx: Turn): Promise<SliceOutcome> {
  if (tx.afterCompaction) {
    deps.bus.emit({
      type: 'error',
      threadId: thread.record.id,
      kind: 'budget',
      message: 'The context window filled up again right after the conversation was compacted; start a new session (/new) or send a shorter task.',
    });
    return 'failed';
  }
  tx.push(userTextMessage(STOP_PHRASES.contextFull));
  await requestCompaction(deps, thread, tx);
  return 'skipped';
}

export async function requestCompaction(deps: SliceDeps, thread: LoadedThread, tx: Turn): Promise<void> {
  const r = thread.record;
  if (r.kind === 'compaction') return;
  // Taken after this slice (a thread's slices run one at a time); a crash before this slice's
  // commit compacts what was committed, which is harmless.
  await deps.deliver({ id: `compact:full:${r.messageCount}:${tx.completions}`, threadId: r.id, body: { kind: 'compaction' } });
}

/** The history ends with the request to go on that a full context left (contextFull), and no call waits. */
export function awaitsReply(thread: LoadedThread, tx: Turn): boolean {
  const last = tx.view().at(-1);
  const block = last?.role === 'user' ? last.content.at(-1) : undefined;
  return tx.batch.length === 0 && thread.record.status !== 'closed' && block?.type === 'text' && block.text === STOP_PHRASES.contextFull;
}

