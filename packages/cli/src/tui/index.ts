// The interactive TUI: what the CLI needs to start it and to implement its controller.
export { runTui, type RunTuiOptions } from './run-tui.js';
export { App, type AppProps } from './app.js';
export { createUiStore, type UiStore } from './store.js';
export type {
  CommandApproval,
  PendingChanges,
  QuitOutcome,
  ReviewOutcome,
  ReviewRequest,
  SessionSummary,
  TuiController,
  TuiInfo,
  UserEditsUpdate,
} from './controller.js';
export { localController, type LocalControllerOptions, type SessionHooks } from './local-controller.js';
export { deferredController } from './deferred-controller.js';
export { pickSession } from './session-picker.js';
export type { PickerSession } from './session-picker-state.js';
export { createReviewBroker, reviewNote, type ReviewBroker, type ReviewBrokerOptions } from './review-broker.js';
export { createCommandApprovals, type ApprovalEvent, type CommandApprovals } from './command-approvals.js';
export { allHunkIds, diffStat, fileHunkIds, fileNotes, isReviewDiff } from '../review-diff.js';
export type { FileStatus, LeftOut, ReviewDecision, ReviewDiff, ReviewFile, ReviewHunk } from '../review-diff.js';
export { reduce, initialState, type UiAction, type UiState, type TranscriptItem } from './state.js';
