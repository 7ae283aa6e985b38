import type { McpServerStatus } from '@infinity-code/mcp';
import type { ModelProvider, Quiescence, RuntimeEvent } from '@infinity-code/runtime';
import type { Effort } from '@infinity-code/runtime/models';
import { timed, timingMark } from '@infinity-code/runtime';
import { AgentSession } from './agent-session.js';
import { pricingOf } from './config.js';
import { formatDuration } from './duration.js';
import { STOP_SIGNALS, UserError, type ExitCode, type StopSignal } from './exit-codes.js';
import { newTally, tallyEvent, textPrinter, type HeadlessWriters, type RunTally } from './headless.js';
import { whenLoopDrains } from './loop-drain.js';
import { buildResult, failedResult, markResultPrinted, modelLimits, NO_CHANGES, totalCost, type Outcome } from './result.js';
import { mcpProgressLine } from './mcp-setup.js';
import { PartialMessages } from './partial-messages.js';
import { projectGitArgs } from './project.js';
import { promptWorkspace } from './prompt-workspace.js';
import { autoAcceptReviewer, fileLines } from './review.js';
import { SECRET_ENV_VARS } from '@infinity-code/sandbox/secret-env';
import type { NetworkSetting } from './sandbox-config.js';
import { applyCommand, savePatch } from './saved-patch.js';
import { setUpSession, type SessionExtras } from './session-setup.js';
import { StreamJsonWriter, type ChangesInfo } from './stream-json.js';
import { prepareTask } from './user-message.js';

export type OutputFormat = 'text' | 'json' | 'stream-json';

export interface HeadlessOptions {
  task: string;
  /**
   * Further user messages (--input-format stream-json), each sent once the agent is done with the
   * one before, until they end.
   */
  moreTurns?: AsyncIterable<string>;
  /** --model: an id or alias. */
  model?: string;
  /** --effort. */
  effort?: Effort;
  yes: boolean;
  outputFormat: OutputFormat;
  /** --verbose: text output tells the run's progress on stderr. */
  verbose?: boolean;
  /** --include-partial-messages: stream-json has a stream_event line per piece of a reply as it streams. */
  includePartialMessages?: boolean;
  continueLatest: boolean;
  resume?: string;
  maxTurns?: number;
  /** --timeout: the whole run is stopped after this long (ms), like an interrupt, with exit code 5. */
  timeoutMs?: number;
  /** --network: overrides the config's `sandbox.network`. */
  network?: NetworkSetting;
  /** --unsandboxed: commands run even where the sandbox cannot confine them. */
  unsandboxed?: boolean;
  /** --mcp-config files or JSON strings (MCP servers). */
  mcpConfig?: string[];
  /** --strict-mcp-config: the --mcp-config servers only. */
  strictMcpConfig?: boolean;
  /** Claude Code's other flags (see SessionExtras). */
  extras?: SessionExtras;
  cwd: string;
  env: NodeJS.ProcessEnv;
  writers: HeadlessWriters;
  /** Aborted on Ctrl+C. */
  signal: AbortSignal;
  /** The demo's scripted model instead of the Anthropic API. */
  provider?: ModelProvider;
  /** The demo's: its sandboxes are removed at the end with the repository, never resumed. */
  throwaway?: boolean;
}

/**
 * Runs one task to quiescence without a TUI. Children's diffs are merged into their parents'
 * sandboxes (nobody is there to ask); the root's diff reaches the working tree only with --yes,
 * otherwise it is saved as a patch and the exit code is 4.
 */
export async function runHeadless(o: HeadlessOptions): Promise<ExitCode> {
  const ctx: RunContext = { started: performance.now() };
  try {
    return await run(o, ctx);
  } catch (err) {
    // JSON output has its result on every exit path (Claude Code's too): a bad config, no key,
    // a git failure. The CLI's handler still tells stderr, and exits with the error's code.
    if (o.outputFormat !== 'text') {
      const result = failedResult(err, { ...ctx, durationMs: performance.now() - ctx.started });
      if (ctx.stream) ctx.stream.result(result);
      else o.writers.out(`${JSON.stringify(o.outputFormat === 'stream-json' ? { ...result, timestamp: new Date().toISOString() } : result)}\n`);
      markResultPrinted(err);
    }
    throw err;
  }
}

/** What a run knows of itself so far, for the result of one an exception ends. */
interface RunContext {
  started: number;
  sessionId?: string;
  model?: string;
  tally?: RunTally;
  pricing?: ReturnType<typeof pricingOf>;
  limits?: ReturnType<typeof modelLimits>;
  stream?: StreamJsonWriter;
}

async function run(o: HeadlessOptions, ctx: RunContext): Promise<ExitCode> {
  const { started } = ctx;
  const setup = setUpSession({
    cwd: o.cwd,
    env: o.env,
    title: o.task,
    ...(o.model ? { model: o.model } : {}),
    ...(o.effort ? { effort: o.effort } : {}),
    continueLatest: o.continueLatest,
    ...(o.resume ? { resume: o.resume } : {}),
    ...(o.provider ? { provider: o.provider } : {}),
    ...(o.maxTurns !== undefined ? { maxTurns: o.maxTurns } : {}),
    ...(o.network !== undefined ? { network: o.network } : {}),
    unsandboxed: o.unsandboxed === true,
    ...(o.mcpConfig ? { mcpConfig: o.mcpConfig } : {}),
    ...(o.strictMcpConfig ? { strictMcpConfig: true } : {}),
    ...(o.extras ? { extras: o.extras } : {}),
  });
  const { root, model, session } = setup;
  Object.assign(ctx, { sessionId: session.id, model, pricing: pricingOf(setup.config), limits: modelLimits(setup.config) });
  for (const warning of setup.mcpWarnings) o.writers.err(`infinity-code: ${warning}\n`);
  // Working on a folder without a repository: said the first time in this folder only.
  if (setup.folder?.notice) o.writers.err(`infinity-code: ${setup.folder.notice}\n`);
  // `/name args` runs a project command; `@path` attaches a file of the working tree (as the TUI does).
  const workspace = promptWorkspace(root, projectGitArgs(setup), setup.cwd);
  const task = prepareTask(o.task, workspace);
  // Notes (a file attached) are progress; warnings (a command name mistyped) are for the user.
  for (const line of [...task.warnings, ...(o.verbose ? task.notes : [])]) o.writers.err(`infinity-code: ${line}\n`);

  // The deadline counts from the start, opening the session included.
  const deadline = o.timeoutMs === undefined ? undefined : runDeadline(o.timeoutMs);
  let refusalTold = false;
  const agent = await AgentSession.open(setup, {
    reviewer: autoAcceptReviewer,
    // The task goes to the model at once; the sandboxes open while it answers.
    sandboxesAfterFirstRequest: true,
    onModelFallback: (from, to, why) =>
      o.writers.err(`infinity-code: ${why}: switched from ${from} to the fallback model ${to} (--fallback-model) for the rest of the session.\n`),
    onCommandRefused: () => {
      // Once: the model is told each time, and says what it could not do.
      if (refusalTold) return;
      refusalTold = true;
      o.writers.err(`infinity-code: ${REFUSED_NOTICE}\n`);
    },
  });
  // The root's diff is made while the model writes: when its last reply comes, the diff is ready.
  // After the root's own tool calls (which may have changed its sandbox) at once: a diff made
  // before a command that changes nothing in the view (a test run) still holds after it (see
  // Sandbox.exec). Otherwise only once the model has taken a while (as a real one does), and
  // not once the reply calls a tool or has ended (say, while the sandbox was still opening):
  // that diff would be thrown away, its processes taken from the tool calls.
  let preparing: NodeJS.Timeout | undefined;
  let replyWriting = false;
  let toolsRan = false;
  const prepareDiff = (e: RuntimeEvent): void => {
    if (e.type === 'completion-started') {
      replyWriting = true;
      preparing = setTimeout(() => agent.prepareRootDiff(() => replyWriting), toolsRan ? 0 : PREPARE_DIFF_AFTER_MS);
      preparing.unref();
      toolsRan = false;
    } else if (e.type === 'completion-finished' || e.type === 'error' || e.type === 'tool-call-streaming') {
      replyWriting = false;
      clearTimeout(preparing);
    } else if (e.type === 'tool-result') {
      toolsRan = true;
    }
  };
  const tally = newTally();
  const print = o.outputFormat === 'text' ? textPrinter(o.writers, session.id, { verbose: o.verbose === true }) : undefined;
  const line = (obj: unknown) => o.writers.out(`${JSON.stringify(obj)}\n`);
  const stream = o.outputFormat === 'stream-json' ? new StreamJsonWriter(line, session.id) : undefined;
  const partial = stream && o.includePartialMessages ? new PartialMessages((threadId, ev) => stream.streamEvent(threadId, ev), session.id) : undefined;
  Object.assign(ctx, { tally, stream });
  // --max-budget-usd: checked as each completion's cost comes in; reached, the run stops as on --timeout.
  const budget = o.extras?.maxBudgetUsd === undefined ? undefined : { usd: o.extras.maxBudgetUsd, stop: new AbortController(), unpriced: false };
  agent.system.subscribe((e: RuntimeEvent) => {
    tallyEvent(tally, e, session.id);
    partial?.event(e);
    print?.(e);
    stream?.event(e);
    if (e.threadId === session.id) prepareDiff(e);
    if (budget && e.type === 'completion-finished' && !budget.stop.signal.aborted) {
      const spent = totalCost(tally, ctx.pricing!);
      if (spent !== null && spent >= budget.usd) budget.stop.abort();
      if (spent === null && !budget.unpriced) {
        budget.unpriced = true;
        o.writers.err(
          `infinity-code: --max-budget-usd can't be kept: ${e.model} has no price, so the run's cost is unknown. ` +
            'Give it one in your config ("prices") for the budget to count.\n',
        );
      }
    }
  });
  // The init line names the sandbox, which opens while the model reads the task: the task is sent
  // first and the stream holds its lines until init is out (awaited below, so a session that
  // cannot open still fails the run).
  const streamInit = stream
    ? Promise.all([agent.backend(), agent.commandsContained()]).then(([sandbox, contained]) =>
        stream.init({
          model,
          cwd: root,
          tools: agent.system.toolNames,
          // As asked (plan, bypassPermissions), else what --yes amounts to.
          permissionMode: o.extras?.permissionMode !== undefined && o.extras.permissionMode !== 'default' ? o.extras.permissionMode : o.yes ? 'acceptEdits' : 'default',
          sandbox,
          contained,
          mcpServers: (agent.mcp?.status() ?? []).map((m) => ({ name: m.name, status: m.state })),
          slashCommands: workspace.commands().commands.map((c) => c.name),
          apiKeySource: apiKeySource(o),
        }),
      )
    : undefined;
  streamInit?.catch(() => {});
  // MCP servers as they come up or fail (those settled before this line too); headless can't ask,
  // so a repository's server starts only when approved in the user's config or named with --mcp-config.
  const mcpReport = (s: McpServerStatus) => {
    if (s.state !== 'stopped') stream?.mcpServer(s);
    const text = mcpProgressLine(s);
    if (text) o.writers.err(`infinity-code: ${text}\n`);
  };
  agent.mcp?.onChange(mcpReport);
  for (const s of agent.mcp?.status() ?? []) if (s.state !== 'starting') mcpReport(s);
  // Ctrl+C, the deadline and the budget stop the run the same way; only the result tells them apart.
  const limits = [deadline?.signal, budget?.stop.signal].filter((x) => x !== undefined);
  const stop = limits.length > 0 ? AbortSignal.any([o.signal, ...limits]) : o.signal;
  const onAbort = () => agent.system.interruptAll();
  stop.addEventListener('abort', onAbort);
  let outcome: Outcome | undefined;
  let timedOut = false;
  const loop = whenLoopDrains();
  /**
   * Each user message of `turns` sent once the agent is quiescent again, until they end or a turn
   * does not end quiescent. A stop (Ctrl+C, a limit) while waiting for the next one ends the wait.
   */
  const turnResult = () =>
    // A turn's result says nothing of changes: the run's own, after the last turn, does.
    buildResult(session.id, model, tally, NO_CHANGES, ctx.pricing!, performance.now() - started, ctx.limits);
  const furtherTurns = async (turns: AsyncIterable<string>, first: Quiescence): Promise<Quiescence> => {
    const it = turns[Symbol.asyncIterator]();
    const stopped = new Promise<'stopped'>((resolve) => {
      if (stop.aborted) resolve('stopped');
      else stop.addEventListener('abort', () => resolve('stopped'), { once: true });
    });
    let end = first;
    try {
      for (;;) {
        // Each turn ends with a result line, as Claude Code's does: a client may wait for it before
        // it writes the next turn. The run's own result (its changes) still comes last.
        stream?.result(turnResult());
        const next = await Promise.race([it.next(), stopped]);
        if (next === 'stopped') {
          void it.return?.();
          return { kind: 'aborted' };
        }
        if (next.done) return end;
        const turn = prepareTask(next.value, workspace);
        for (const l of [...turn.warnings, ...(o.verbose ? turn.notes : [])]) o.writers.err(`infinity-code: ${l}\n`);
        await agent.system.sendUserText(session.id, turn.message);
        end = await agent.system.whenQuiescent({ signal: stop, stalled: loop.drained });
        if (end.kind !== 'quiescent') {
          void it.return?.();
          return end;
        }
      }
    } catch (err) {
      // A line that is no user message: the run ends there, failed, with what the agent did so far.
      if (!(err instanceof UserError)) throw err;
      tally.errors.push({ kind: 'input', message: err.message });
      o.writers.err(`infinity-code: ${err.message}\n`);
      return end;
    }
  };
  try {
    // A conversation's tools are fixed at its first request (thinking is bound to them): its MCP
    // servers' tools go in with it, so the task waits for them to start or fail.
    if (agent.mcp && !stop.aborted) await Promise.race([agent.mcp.settled(), new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }))]);
    await agent.system.sendUserText(session.id, task.message);
    await streamInit;
    // Past the deadline while the session opened: the task is stored (for -c), and stopped at once.
    if (stop.aborted) onAbort();
    let end = await agent.system.whenQuiescent({ signal: stop, stalled: loop.drained });
    // --input-format stream-json: the next user message once the agent is done with the one before.
    if (o.moreTurns && end.kind === 'quiescent') end = await furtherTurns(o.moreTurns, end);
    timingMark('quiescent', () => end.kind);
    const overBudget = end.kind === 'aborted' && !o.signal.aborted && budget?.stop.signal.aborted === true;
    timedOut = end.kind === 'aborted' && !o.signal.aborted && !overBudget;
    if (overBudget) {
      const spent = totalCost(tally, ctx.pricing!) ?? 0;
      const message =
        `The run reached its budget (--max-budget-usd ${budget.usd}) at $${spent.toFixed(4)} and was stopped: every thread ` +
        'and command ended, and its changes so far are kept. Continue with `infinity-code -c`.';
      tally.errors.push({ kind: 'max_budget_usd', message });
      if (o.outputFormat === 'text') o.writers.err(`Error: ${message}\n`);
    }
    if (end.kind === 'stalled') {
      const message = stalledMessage(end);
      tally.errors.push({ kind: 'stalled', message });
      if (o.outputFormat === 'text') o.writers.err(`Error: ${message}\n`);
    }
    if (timedOut) {
      // A budget like --max-turns: the result says 'limit' and the exit code is 5.
      const message = timeoutMessage(o.timeoutMs!);
      tally.errors.push({ kind: 'budget', message });
      if (o.outputFormat === 'text') o.writers.err(`Error: ${message}\n`);
    }
    // As Claude Code's -p: the final answer alone on stdout, as soon as it is known.
    if (o.outputFormat === 'text' && tally.answer.trim() !== '') o.writers.out(tally.answer.endsWith('\n') ? tally.answer : `${tally.answer}\n`);
    outcome = await finish(agent, root, o, { stalled: end.kind === 'stalled', unfinished: end.kind !== 'quiescent' });
  } finally {
    loop.dispose();
    deadline?.dispose();
    stop.removeEventListener('abort', onAbort);
    // Sandboxes are kept for the next run (-c) unless everything reached the working tree.
    const settled = outcome !== undefined && !outcome.interrupted && !outcome.stalled && !timedOut && budget?.stop.signal.aborted !== true &&
      outcome.unreported.length === 0 && (outcome.applied || outcome.filesChanged.length === 0);
    const closing = performance.now();
    await agent.close({ keep: !settled && o.throwaway !== true });
    timed('close', closing);
  }
  const result = buildResult(session.id, model, tally, outcome, ctx.pricing!, performance.now() - started, ctx.limits);
  if (o.outputFormat === 'text') report(o.writers, outcome, setup.folder !== undefined);
  else if (stream) {
    stream.changes(changesOf(outcome));
    stream.result(result);
  } else line(result);
  return result.exit_code;
}

/**
 * Apply the root's changes (--yes) or save them as a patch; list what children never reported.
 * Unfinished work (interrupted, timed out, or stuck) is always saved as a patch, never applied.
 * Either way, what the diff leaves out (see SandboxDiff.omitted) is neither applied nor saved.
 */
async function finish(
  agent: AgentSession,
  root: string,
  o: HeadlessOptions,
  { stalled, unfinished }: { stalled: boolean; unfinished: boolean },
): Promise<Outcome> {
  // --permission-mode plan is read-only: what its commands changed in the sandbox is neither
  // applied nor saved, nor reported as changes (no file tool could edit, no child could start).
  if (o.extras?.permissionMode === 'plan') {
    return {
      ...NO_CHANGES,
      interrupted: o.signal.aborted,
      ...(o.signal.aborted && isStopSignal(o.signal.reason) ? { stoppedBy: o.signal.reason } : {}),
      stalled,
    };
  }
  const unreported = await agent.unreported();
  const diffing = performance.now();
  const diff = await agent.rootDiff();
  timed('root-diff', diffing, () => `${diff.files.length} files`);
  const outcome: Outcome = {
    interrupted: o.signal.aborted,
    ...(o.signal.aborted && isStopSignal(o.signal.reason) ? { stoppedBy: o.signal.reason } : {}),
    stalled,
    filesChanged: diff.files.map((f) => f.path),
    applied: false,
    patchFile: null,
    conflicts: [],
    leftOut: diff.omitted.map((f) => ({ ...f })),
    unreported,
  };
  if (diff.isEmpty) return outcome;
  // A Ctrl+C after the run ended still means: don't touch my tree.
  if (o.yes && !unfinished && !o.signal.aborted) {
    // Applied with nothing unreported, the run is settled and its sandboxes go (see runHeadless):
    // what they delivered need not be remembered for a later -c.
    const applying = performance.now();
    const applied = await agent.applyToWorkingTree(diff, { remember: unreported.length > 0 });
    timed('apply', applying, () => `${diff.files.length} files`);
    outcome.applied = true;
    outcome.conflicts = applied.conflicts;
    return outcome;
  }
  outcome.patchFile = savePatch(root, agent.rootId, diff.patchBytes, o.cwd);
  return outcome;
}

/** Claude Code's init `apiKeySource`: which of the environment's credentials the requests carry. */
function apiKeySource(o: HeadlessOptions): string {
  if (o.provider) return 'none';
  return SECRET_ENV_VARS.find((name) => o.env[name]) ?? 'none';
}

function changesOf(o: Outcome): ChangesInfo {
  const subtype = o.applied ? 'applied' : o.patchFile !== null ? 'saved' : 'none';
  return { subtype, files: o.filesChanged, conflicts: o.conflicts, patch_file: o.patchFile };
}

/** How long a completion of the root runs before its diff is prepared (see prepareDiff). */
const PREPARE_DIFF_AFTER_MS = 200;

const REFUSED_NOTICE =
  "a command was not run: the sandbox can't confine commands on this machine (they would reach your files, " +
  'credentials and network), so they are refused. Run with --unsandboxed to let them run anyway.';

function timeoutMessage(ms: number): string {
  return (
    `The run reached its time limit (--timeout ${formatDuration(ms)}) and was stopped: every thread and command ` +
    'ended, and its changes so far are kept. Continue with `infinity-code -c`.'
  );
}

/**
 * Aborts its signal `ms` after now. Unref'd: a run with nothing left to wake it must still be
 * found stalled (the loop drains), not wait for the deadline.
 */
function runDeadline(ms: number): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  timer.unref();
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}

function stalledMessage(end: Extract<Quiescence, { kind: 'stalled' }>): string {
  const waits = end.waiting.map((w) => `${w.subscription.name} ${w.subscription.callId} (thread ${w.threadId})`);
  return (
    'The run stopped before the agent finished: nothing is left that could wake it' +
    (waits.length > 0 ? `; it waits for events of ${waits.join(', ')}, which nothing will send` : '') +
    '. Continue with `infinity-code -c` (open background commands are then reported as ended).'
  );
}

function report(w: HeadlessWriters, o: Outcome, folder: boolean): void {
  if (o.interrupted) w.err('Interrupted. Continue later with `infinity-code -c`.\n');
  if (o.applied) {
    w.err(`Applied changes to ${o.filesChanged.length} file(s) in the working tree:\n`);
    w.err(fileLines(o.filesChanged));
    if (o.conflicts.length > 0) {
      w.err(`These files have conflicts with your own edits (left with conflict markers): ${o.conflicts.join(', ')}\n`);
    }
  } else if (o.patchFile) {
    w.err(
      `Changes to ${o.filesChanged.length} file(s) were not applied (run with --yes to apply them). ` +
        `The patch is at ${o.patchFile}; apply it with \`${applyCommand(o.patchFile, folder)}\`.` +
        (o.leftOut.length > 0 ? ' It leaves out the changes listed below, which --yes would not apply either.' : '') +
        '\n',
    );
  }
  if (o.leftOut.length > 0) {
    w.err(`Left out ${o.leftOut.length} change(s) the agent made; they were not applied:\n`);
    for (const f of o.leftOut) w.err(`  ${f.path} — ${f.reason}\n`);
  }
  for (const u of o.unreported) {
    w.err(`Thread ${u.threadId} changed ${u.files.join(', ')} but never reported; those changes were not merged.\n`);
  }
}

function isStopSignal(reason: unknown): reason is StopSignal {
  return typeof reason === 'string' && Object.hasOwn(STOP_SIGNALS, reason);
}
