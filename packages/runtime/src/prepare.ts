import type { InputMessage } from './input.js';
import type { HistoryMessage } from './messages.js';
import { text } from './messages.js';
import { toolResultMessage, userTextMessage } from './history.js';
import type { PendingCall } from './store.js';

export const INTERRUPTED_BY_USER = 'Tool call interrupted by user';

export interface DroppedInput {
  input: InputMessage;
  reason: 'duplicate' | 'stale';
}

export interface Prepared {
  /** New history rows, in input order. */
  append: HistoryMessage[];
  /** Every input id handled (accepted or dropped): all become processed. */
  consumed: string[];
  accepted: InputMessage[];
  dropped: DroppedInput[];
  /** Calls answered with the interruption result; their tools should be told to stop. */
  interrupted: PendingCall[];
  pendingCall: PendingCall | null;
  /** Something new for the model to respond to. */
  actionable: boolean;
}

/**
 * Step 2 of a slice, pure: fold queued inputs into history in arrival order. Duplicates (same id)
 * and stale tool results (not answering the last unanswered call) are dropped; user text
 * interrupts a pending call, which gets a synthetic result so the history stays well formed.
 */
export function prepareInputs(
  pendingCall: PendingCall | null,
  inputs: readonly InputMessage[],
  processed: ReadonlySet<string>,
): Prepared {
  const out: Prepared = {
    append: [],
    consumed: [],
    accepted: [],
    dropped: [],
    interrupted: [],
    pendingCall,
    actionable: false,
  };
  const seen = new Set<string>();
  for (const input of inputs) {
    if (processed.has(input.id) || seen.has(input.id)) {
      out.dropped.push({ input, reason: 'duplicate' });
      continue;
    }
    seen.add(input.id);
    out.consumed.push(input.id);
    const body = input.body;
    switch (body.kind) {
      case 'user_text': {
        if (out.pendingCall) {
          out.append.push(
            toolResultMessage(out.pendingCall.id, [text(INTERRUPTED_BY_USER)], true),
          );
          out.interrupted.push(out.pendingCall);
          out.pendingCall = null;
        }
        out.append.push(userTextMessage(body.text));
        out.accepted.push(input);
        out.actionable = true;
        break;
      }
      case 'tool_result': {
        if (!out.pendingCall || out.pendingCall.id !== body.toolUseId) {
          out.dropped.push({ input, reason: 'stale' });
          break;
        }
        out.append.push(toolResultMessage(body.toolUseId, body.content, body.isError === true));
        out.pendingCall = null;
        out.accepted.push(input);
        out.actionable = true;
        break;
      }
    }
  }
  return out;
}
