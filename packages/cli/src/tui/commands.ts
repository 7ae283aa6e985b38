import { randomUUID } from 'node:crypto';
import { ReviewChangedError, type ReviewDecision, type ReviewDiff } from '../review-diff.js';
import type { CommandApproval, TuiController } from './controller.js';
import { shortId } from './format.js';
// The light subpath: this module is part of the first frame.
import { resolveModelId } from '@infinity-code/runtime/models';
import { effortProblem, effortText, parseEffortArg } from '../effort.js';
import { modelsText, retiredModelMessage } from '../model-choice.js';
import { expandCommand, NO_PROJECT_COMMANDS } from '../project-commands.js';
import type { PromptWorkspace } from '../prompt-workspace.js';
import { withAttachments } from '../user-message.js';
import { leftBehindLine } from '../pending-changes.js';
import { backgroundReport, stoppedText } from './background-report.js';
import { helpText, parseSlash, type SlashCommand } from './slash-commands.js';
import type { UiStore } from './store.js';
import type { PendingReview, UiState } from './ui-state.js';

/** What the App gives the command layer: the controller, the UI store, and how to leave. */
export interface CommandContext {
  controller: TuiController;
  store: UiStore;
  /** The repository's project commands and files; without it, no project commands or attachments. */
  workspace?: PromptWorkspace;
  /** Leave (asking first what becomes of changes the working tree lacks; see quit-flow.ts). */
  quit(): void;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

function say(ctx: CommandContext, text: string, level: 'info' | 'error' = 'info'): void {
  ctx.store.dispatch({ type: 'ui:notice', level, text });
}

/**
 * A line from the prompt: a built-in command, or a message for the agent (a project command's
 * prompt, with the files its `@` mentions name attached). The transcript shows the line as typed.
 */
export async function submitLine(ctx: CommandContext, line: string): Promise<void> {
  // Read again each time: an edit to a command file counts at once.
  const project = line.trimStart().startsWith('/') ? (ctx.workspace?.commands() ?? NO_PROJECT_COMMANDS) : NO_PROJECT_COMMANDS;
  const parsed = parseSlash(line, project.commands);
  if (parsed.kind === 'error') {
    const head = /^\/(\S+)/.exec(line.trim())?.[1] ?? '';
    // A command whose file is wrong: say what is wrong with it rather than "unknown".
    const broken = project.problems.filter((p) => p.name === head).map((p) => p.message);
    return say(ctx, broken.length > 0 ? broken.join('\n') : parsed.message, 'error');
  }
  if (parsed.kind === 'command') return runCommand(ctx, parsed.command);
  // "//x" is the escape for a message starting with a slash.
  let text = line.startsWith('//') ? line.slice(1) : line;
  if (parsed.kind === 'project') {
    const command = project.commands.find((c) => c.name === parsed.name)!;
    text = expandCommand(command, parsed.args);
  }
  ctx.store.dispatch({ type: 'ui:submit', text: parsed.kind === 'project' ? line : text });
  try {
    const prepared = ctx.workspace ? withAttachments(text, ctx.workspace) : { message: text, notes: [] };
    for (const note of prepared.notes) say(ctx, note);
    await ctx.controller.send(prepared.message);
  } catch (err) {
    say(ctx, `Could not send the message: ${errorText(err)}`, 'error');
  }
}

export async function runCommand(ctx: CommandContext, cmd: SlashCommand): Promise<void> {
  const { controller, store } = ctx;
  try {
    switch (cmd.name) {
      case 'help':
        return say(ctx, helpText(ctx.workspace?.commands()));
      case 'quit':
        return ctx.quit();
      case 'stop':
        if (!stopRun(ctx)) say(ctx, nothingToStop(store.getState()));
        return;
      case 'bg': {
        const s = store.getState();
        return say(ctx, backgroundReport(s.background, s, Date.now()));
      }
      case 'compact':
        // The runtime's compaction events put the notices in the transcript.
        return await controller.compact();
      case 'new': {
        // The session left behind keeps its changes; the user hears where they are.
        const previous = store.getState().status.sessionId;
        const pending = await controller.pendingChanges().catch(() => null);
        const s = await controller.newSession();
        store.dispatch({ type: 'ui:session', sessionId: s.sessionId, rootThreadId: s.rootThreadId ?? s.sessionId });
        if (pending && pending.files.length > 0) say(ctx, leftBehindLine(pending.files, previous));
        return;
      }
      case 'sessions': {
        const list = await controller.listSessions();
        if (list.length === 0) return say(ctx, 'No sessions yet.');
        const current = store.getState().status.sessionId;
        const lines = list.map((s) => {
          const when = s.updatedAt === undefined ? '' : `  ${new Date(s.updatedAt).toISOString().slice(0, 16).replace('T', ' ')}`;
          return `${s.id === current ? '*' : ' '} ${shortId(s.id)}${when}  ${s.title}`;
        });
        return say(ctx, `Sessions (resume one with infinity-code -r <id>):\n${lines.join('\n')}`);
      }
      case 'model': {
        const { model: current, effort } = store.getState().status;
        if (!cmd.id) return say(ctx, modelsText(current, store.getState().pricing));
        // Refused here, before any request: the session keeps its model.
        const retired = retiredModelMessage(cmd.id, { kind: 'tui', current });
        if (retired) return say(ctx, retired, 'error');
        const id = resolveModelId(cmd.id);
        const r = await controller.setModel(id);
        store.dispatch({ type: 'ui:model', model: id, ...(r?.contextWindow ? { contextWindow: r.contextWindow } : {}) });
        // A level the new model doesn't accept is dropped, and said: its own default applies (the
        // provider would not send that level to it), and /effort shows what is in force.
        const problem = effort === undefined ? undefined : effortProblem(effort, id);
        if (problem) {
          say(ctx, problem);
          await controller.setEffort(undefined);
          store.dispatch({ type: 'ui:effort', effort: undefined });
        }
        return;
      }
      case 'effort': {
        const { model, effort } = store.getState().status;
        if (!cmd.level) return say(ctx, effortText(model, effort));
        const wanted = parseEffortArg(cmd.level);
        if ('error' in wanted) return say(ctx, wanted.error, 'error');
        const problem = wanted.effort === undefined ? undefined : effortProblem(wanted.effort, model);
        if (problem) return say(ctx, `${problem} The effort is still ${effort ?? "the model's default"}.`, 'error');
        await controller.setEffort(wanted.effort);
        return store.dispatch({ type: 'ui:effort', effort: wanted.effort });
      }
      case 'notes':
        return store.dispatch({ type: 'ui:notes' });
      case 'cost': {
        const rows = await controller.usage();
        // Loaded on use: it needs the runtime's main module, which the first frame doesn't wait for.
        const { costReport } = await import('./cost-report.js');
        const s = store.getState();
        return say(ctx, costReport(rows, s.pricing, s.status.sessionId));
      }
      case 'mcp': {
        const { mcpReport } = await import('./mcp-report.js');
        return say(ctx, mcpReport(await controller.mcpStatus()));
      }
      case 'refresh': {
        if (store.getState().userEdited.length === 0) return say(ctx, 'You have not edited any file since the session began: nothing to refresh.');
        const outcome = await controller.refreshBase();
        return say(ctx, outcome.message);
      }
      case 'diff': {
        const diff = await controller.showDiff();
        if (!diff || diff.files.length === 0) {
          const leftOut = (diff?.leftOut ?? []).map((l) => `  ${l.path} — left out: ${l.reason}`);
          return say(
            ctx,
            leftOut.length === 0
              ? 'Nothing to apply: your working tree has every change of this session.'
              : `Nothing to apply. The agent's other changes are left out:\n${leftOut.join('\n')}`,
          );
        }
        return openWorkingTreeReview(ctx, diff);
      }
    }
  } catch (err) {
    say(ctx, `/${cmd.name} failed: ${errorText(err)}`, 'error');
  }
}

/**
 * Stops what runs and says so in the transcript; false when nothing ran. `all` (/stop): the
 * model's completions and the session's commands in the background. `step` (Esc, Ctrl+C): the
 * completions if any run, else the background commands, so a stop of the model spares the
 * user's dev server until asked again.
 */
export function stopRun(ctx: CommandContext, scope: 'all' | 'step' = 'all'): boolean {
  const model = ctx.controller.stop();
  const running = ctx.store.getState().background;
  const commands = scope === 'all' || !model ? running : [];
  for (const c of commands) {
    // Its row goes once the command is gone (its last output says so).
    ctx.controller.stopCommand(c.threadId, c.callId).catch((err: unknown) => say(ctx, `Could not stop ${c.display}: ${errorText(err)}`, 'error'));
  }
  if (!model && commands.length === 0) return false;
  say(ctx, stoppedText({ model, commands, leftRunning: running.length - commands.length }));
  return true;
}

/** `/stop` with nothing to stop: said plainly, or what the agent waits for and how to end it. */
function nothingToStop(s: UiState): string {
  const waiting = s.running.find((r) => r.threadId === s.rootThreadId && !r.sync && !r.passive);
  if (!waiting) return 'Nothing is running.';
  return `The agent waits for ${waiting.display}, which ends by itself; a message from you interrupts the wait.`;
}

/** Esc on a review of the session's changes: it closes, nothing is applied, `/diff` brings it back. */
export function dismissReview(ctx: CommandContext, review: PendingReview): void {
  ctx.store.dispatch({ type: 'ui:review-closed', id: review.id });
  say(ctx, 'Review closed: nothing was applied. The changes wait for /diff.');
}

/** The user answered a command approval: it leaves the screen, and the command runs or is declined. */
export function answerCommand(ctx: CommandContext, approval: CommandApproval, allow: boolean): void {
  ctx.store.dispatch({ type: 'ui:approval-closed', id: approval.id });
  ctx.controller.answerCommand(approval.id, allow);
}

/** The human decided a review: close it, let the controller carry it out, report the outcome. */
export async function decideReview(ctx: CommandContext, review: PendingReview, decision: ReviewDecision): Promise<void> {
  ctx.store.dispatch({ type: 'ui:review-closed', id: review.id });
  const a = decision.accepted.length;
  const r = decision.rejected.length;
  say(ctx, `${review.title}: accepted ${a} ${a === 1 ? 'hunk' : 'hunks'}, rejected ${r}.`);
  try {
    const outcome = await ctx.controller.resolveReview(review, decision);
    say(ctx, outcome.message);
    if (outcome.conflicts && outcome.conflicts.length > 0) {
      say(ctx, `Conflicts (resolve the markers in these files):\n${outcome.conflicts.map((f) => `  ${f}`).join('\n')}`, 'error');
    }
  } catch (err) {
    if (!(err instanceof ReviewChangedError)) return say(ctx, `Could not apply the review: ${errorText(err)}`, 'error');
    say(ctx, err.message, 'error');
    // The changes as they are now, to decide on again. A child's review comes back by itself
    // (the broker asks again, the child still waiting); the session's diff is opened here.
    if (review.kind === 'working-tree' && err.fresh) openWorkingTreeReview(ctx, err.fresh);
  }
}

/** Opens a review of the session's changes for the working tree (`/diff`). */
function openWorkingTreeReview(ctx: CommandContext, diff: ReviewDiff): void {
  const review: PendingReview = { id: `diff:${randomUUID()}`, kind: 'working-tree', diff, title: 'Session changes → working tree' };
  ctx.store.dispatch({ type: 'ui:review-open', review });
}
