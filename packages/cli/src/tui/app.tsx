import { Box, Text, useApp, useInput, useStdin, useStdout } from 'ink';
import { useCallback, useEffect, useMemo, useRef, useSyncExternalStore } from 'react';
import { BackgroundRows } from './background-rows.js';
import { answerCommand, decideReview, dismissReview, stopRun, submitLine, type CommandContext } from './commands.js';
import { CommandConfirm } from './command-confirm.js';
import type { TuiController } from './controller.js';
import { DiffReview } from './diff-review.js';
import { LiveTurn } from './live-turn.js';
import { PromptInput } from './prompt-input.js';
import { promptCompleter } from './prompt-completion.js';
import type { PromptWorkspace } from '../prompt-workspace.js';
import { quitFlow } from './quit-flow.js';
import { QuitPrompt } from './quit-prompt.js';
import { StatusLine } from './status-line.js';
import type { UiStore } from './store.js';
import { ThreadRows } from './thread-rows.js';
import { editWarning, UserEdits } from './user-edits.js';
import { Transcript } from './transcript.js';

/** A second Ctrl+C within this window quits. */
export const QUIT_WINDOW_MS = 2000;

export interface AppProps {
  store: UiStore;
  controller: TuiController;
  /** Spinners move (off for tests and screen readers). */
  animate?: boolean;
  /** The repository as the prompt sees it: project commands, `@` paths and the files they name. */
  workspace?: PromptWorkspace;
  /** Submitted once at the start, as if typed (`infinity-code "task"`, the demo's task). */
  firstLine?: string;
}

/** The whole screen: transcript above, then the live turn, children, the input and the status. */
export function App({ store, controller, animate = true, workspace, firstLine }: AppProps) {
  const state = useSyncExternalStore(store.subscribe, store.getState);
  const { exit } = useApp();
  const { isRawModeSupported } = useStdin();
  const { stdout } = useStdout();
  const keyboard = isRawModeSupported === true;
  const rows = stdout.rows > 0 ? stdout.rows : 24;
  const disarm = useRef<NodeJS.Timeout | undefined>(undefined);
  useEffect(() => () => clearTimeout(disarm.current), []);

  const flow = useMemo(() => quitFlow({ controller, store, canAsk: keyboard, exit }), [controller, store, keyboard, exit]);
  const ctx: CommandContext = useMemo(
    () => ({ controller, store, ...(workspace ? { workspace } : {}), quit: () => flow.request() }),
    [controller, store, flow, workspace],
  );

  const firstSent = useRef(false);
  useEffect(() => {
    if (firstLine === undefined || firstSent.current) return;
    firstSent.current = true;
    void submitLine(ctx, firstLine);
  }, [ctx, firstLine]);

  useInput(
    (input, key) => {
      const s = store.getState();
      if (s.leaving) return;
      if (key.ctrl && input === 'c') {
        // Asked what becomes of the changes, a user pressing Ctrl+C again wants out: keep them.
        if (s.quitAsk) return flow.leave('keep');
        if (s.quitArmed) return flow.request();
        stopRun(ctx, 'step');
        store.dispatch({ type: 'ui:quit-armed', armed: true });
        clearTimeout(disarm.current);
        disarm.current = setTimeout(() => store.dispatch({ type: 'ui:quit-armed', armed: false }), QUIT_WINDOW_MS);
        return;
      }
      if (key.ctrl && input === 'd') return flow.request();
      // Esc belongs to the question, the review or the approval while one is open; then it stops
      // the model, and pressed again (or with the model idle) the commands in the background.
      const running = s.busy || s.background.length > 0;
      if (key.escape && !s.quitAsk && s.reviews.length === 0 && s.approvals.length === 0 && running) stopRun(ctx, 'step');
    },
    { isActive: keyboard },
  );

  const onSubmit = useCallback((line: string) => void submitLine(ctx, line), [ctx]);
  const complete = useMemo(() => promptCompleter(workspace), [workspace]);
  const approval = state.approvals[0];
  const review = state.reviews[0];
  const warning = review ? editWarning(review, state.userEdited) : undefined;
  const rootRunning = state.running.filter((r) => r.threadId === state.rootThreadId);
  return (
    <Box flexDirection="column">
      <Transcript items={state.items} epoch={state.epoch} />
      <LiveTurn
        text={state.liveText}
        thinking={state.liveThinking}
        busy={state.busy}
        {...(state.completionSince !== undefined ? { since: state.completionSince } : {})}
        {...(state.silentSince !== undefined ? { silentSince: state.silentSince } : {})}
        running={rootRunning}
        maxLines={Math.max(4, rows - 14)}
        animate={animate}
      />
      <BackgroundRows commands={state.background} rootThreadId={state.rootThreadId} threads={state.threads} animate={animate} />
      <ThreadRows threads={state.threads} animate={animate} columns={stdout.columns > 0 ? stdout.columns : 80} />
      {state.leaving ? (
        <Text dimColor>{state.leaving === 'apply' ? 'Applying the changes to your working tree…' : 'Closing the session…'}</Text>
      ) : state.quitAsk ? (
        <QuitPrompt files={state.quitAsk.files} isActive={keyboard} onChoice={flow.leave} onCancel={flow.cancel} />
      ) : approval ? (
        <CommandConfirm
          key={approval.id}
          command={approval.command}
          {...(approval.kind ? { kind: approval.kind } : {})}
          {...(approval.server ? { server: approval.server } : {})}
          from={approval.threadId === state.rootThreadId ? 'The agent' : (state.threads.find((t) => t.id === approval.threadId)?.label ?? 'A child thread')}
          isActive={keyboard}
          onAnswer={(allow) => answerCommand(ctx, approval, allow)}
        />
      ) : review ? (
        <DiffReview
          key={review.id}
          diff={review.diff}
          title={review.title}
          isActive={keyboard}
          maxHunkLines={Math.max(6, rows - 18)}
          {...(warning ? { warning } : {})}
          {...(review.kind === 'working-tree' ? { onDismiss: () => dismissReview(ctx, review) } : {})}
          onDecision={(d) => void decideReview(ctx, review, d)}
          onShowInFull={(hunk) => store.dispatch({ type: 'ui:hunk-in-full', ...hunk })}
        />
      ) : (
        <PromptInput onSubmit={onSubmit} complete={complete} isActive={keyboard} placeholder="Ask for a change, or /help" />
      )}
      <UserEdits paths={state.userEdited} />
      {state.reviews.length > 1 ? <Text color="yellow">{state.reviews.length - 1} more to review after this one</Text> : null}
      <StatusLine status={state.status} {...(state.quitArmed ? { hint: 'Press Ctrl+C again to quit.' } : {})} />
    </Box>
  );
}
