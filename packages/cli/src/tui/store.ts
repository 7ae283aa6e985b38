import type { RuntimeEvent } from '@infinity-code/runtime';
import type { TuiController, TuiInfo } from './controller.js';
import { initialState, reduce, type UiAction, type UiState } from './state.js';

/**
 * The UI state outside React: it subscribes to the runtime as soon as it is created, so no event
 * is lost between creating the UI and React running its effects, and React reads it through
 * useSyncExternalStore.
 */
export interface UiStore {
  getState: () => UiState;
  dispatch(event: RuntimeEvent | UiAction): void;
  /** For React: called after every change. */
  subscribe: (listener: () => void) => () => void;
  /** Stop listening to the runtime. */
  disconnect(): void;
}

/** `clock`: when each event happens, for how long things have been running (epoch ms). */
export function createUiStore(controller: TuiController, info: TuiInfo, clock: () => number = Date.now): UiStore {
  let state = initialState(info);
  let listeners: Array<() => void> = [];
  const dispatch = (event: RuntimeEvent | UiAction) => {
    const next = reduce(state, event, clock());
    if (next === state) return;
    state = next;
    for (const l of listeners) l();
  };
  const unsubscribe = controller.subscribe(dispatch);
  const unsubscribeReviews = controller.onReviewRequest((review) => dispatch({ type: 'ui:review-open', review }));
  const unsubscribeApprovals = controller.onCommandApproval(
    (approval) => dispatch({ type: 'ui:approval-open', approval }),
    (id) => dispatch({ type: 'ui:approval-closed', id }),
  );
  const unsubscribeEdits = controller.onUserEdits((edits) => {
    dispatch({ type: 'ui:user-edits', paths: edits.paths });
    if (edits.problem) dispatch({ type: 'ui:notice', level: 'error', text: edits.problem });
  });
  const unsubscribeWaiting = controller.onChangesWaiting((changes) => dispatch({ type: 'ui:changes-waiting', files: changes.files }));
  return {
    getState: () => state,
    dispatch,
    subscribe(listener) {
      listeners = [...listeners, listener];
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    disconnect() {
      unsubscribe();
      unsubscribeReviews();
      unsubscribeApprovals();
      unsubscribeEdits();
      unsubscribeWaiting();
    },
  };
}
