import type { QuitChoice } from '../pending-changes.js';
import type { TuiController } from './controller.js';
import type { UiStore } from './store.js';

/** Leaving the TUI without losing work: changes the working tree lacks are never dropped quietly. */
export interface QuitFlow {
  /**
   * The user asked to leave (/quit, Ctrl+C twice, Ctrl+D). With changes the working tree has not
   * received, they are asked what becomes of them; with no way to ask (no keyboard), they are kept.
   */
  request: () => void;
  /** Leave, the pending changes applied, kept for the next run, or discarded. */
  leave: (changes: QuitChoice) => void;
  /** Stay after all (the question is dismissed). */
  cancel: () => void;
}

export interface QuitFlowOptions {
  controller: TuiController;
  store: UiStore;
  /** The keyboard works: a question can be answered. */
  canAsk: boolean;
  /** Ends the UI; the outcome's message is what the TUI's caller prints. */
  exit: (result?: string | Error) => void;
}

export function quitFlow({ controller, store, canAsk, exit }: QuitFlowOptions): QuitFlow {
  let checking = false;
  let leaving = false;
  const leave = (changes: QuitChoice) => {
    if (leaving) return;
    leaving = true;
    store.dispatch({ type: 'ui:leaving', changes });
    // Leave even if releasing the session fails: the user asked to go.
    controller.quit(changes).then(
      (outcome) => exit(outcome.message),
      (err: unknown) => exit(err instanceof Error ? err : new Error(String(err))),
    );
  };
  return {
    request: () => {
      if (checking || leaving || store.getState().quitAsk) return;
      checking = true;
      // Not knowing means keeping: nothing is dropped without the user's word.
      void controller
        .pendingChanges()
        .catch(() => null)
        .then((pending) => {
          checking = false;
          if (!pending || pending.files.length === 0 || !canAsk) return leave('keep');
          store.dispatch({ type: 'ui:quit-ask', files: pending.files });
        });
    },
    leave,
    cancel: () => {
      if (!leaving) store.dispatch({ type: 'ui:quit-cancel' });
    },
  };
}
