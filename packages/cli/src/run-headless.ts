import type { McpServerStatus } from '@infinity-code/mcp';
import type { ModelProvider, Quiescence, RuntimeEvent } from '@infinity-code/runtime';
import type { Effort } from '@infinity-code/runtime/models';
import { timed, timingMark } from '@infinity-code/runtime';
import { AgentSession } from './agent-session.js';
import { pricingOf } from './config.js';
import { formatDuration } from './duration.js';
import { STOP_SIGNALS, type ExitCode, type StopSignal } from './exit-codes.js';
import { newTally, tallyEvent, textPrinter, type HeadlessWriters } from './headless.js';
import { whenLoopDrains } from './loop-drain.js';
import { buildResult, type Outcome } from './result.js';
import { mcpProgressLine } from './mcp-setup.js';
import { promptWorkspace } from './prompt-workspace.js';
import { autoAcceptReviewer, fileLines } from './review.js';
import type { NetworkSetting } from './sandbox-config.js';
import { savePatch } from './saved-patch.js';
import { setUpSession } from './session-setup.js';
import { StreamJsonWriter, type ChangesInfo } from './stream-json.js';
import { prepareTask } from './user-message.js';

export type OutputFormat = 'text' | 'json' | 'stream-json';

export interface HeadlessOptions {
  task: string;
  /** --model: an id or alias. */
  model?: string;
  /** --effort. */
  effort?: Effort;
  yes: boolean;
  outputFormat: OutputFormat;
  continueLatest: boolean;
  resume?: string;
  maxTurns?: number;
  /** --timeout: the whole run is stopped after this long (ms), like an interrupt, with exit code 5. */
  timeoutMs?: number;
  /** --network: overrides the config's `sandbox.network`. */
  network?: NetworkSetting;
  /** --unsandboxed: commands run even where the sandbox cannot confine them. */
  unsandboxed?: boolean;
  /** --mcp-config files (MCP servers). */
  mcpConfig?: string[];
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
  const started = performance.now();
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
  });
  const { root, model, session } = setup;
  for (const warning of setup.mcpWarnings) o.writers.err(`infinity-code: ${warning}\n`);
  // `/name args` runs a project command; `@path` attaches a file of the working tree (as the TUI does).
  const task = prepareTask(o.task, promptWorkspace(root));
  for (const line of [...task.warnings, ...task.notes]) o.writers.err(`infinity-code: ${line}\n`);

  // The deadline counts from the start, opening the session included.
  const deadline = o.timeoutMs === undefined ? undefined : runDeadline(o.timeoutMs);
  let refusalTold = false;
  const agent = await AgentSession.open(setup, {
    reviewer: autoAcceptReviewer,
    // The task goes to the model at once; the sandboxes open while it answers.
    sandboxesAfterFirstRequest: true,
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
  const print = o.outputFormat === 'text' ? textPrinter(o.writers, session.id) : undefined;
  const line = (obj: unknown) => o.writers.out(`${JSON.stringify(obj)}\n`);
  const stream = o.outputFormat === 'stream-json' ? new StreamJsonWriter(line, session.id) : undefined;
  agent.system.subscribe((e: RuntimeEvent) => {
    tallyEvent(tally, e, session.id);
    print?.(e);
    stream?.event(e);
    if (e.threadId === session.id) prepareDiff(e);
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
          permissionMode: o.yes ? 'acceptEdits' : 'default',
          sandbox,
          contained,
          mcpServers: (agent.mcp?.status() ?? []).map((m) => ({ name: m.name, status: m.state })),
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
  // Ctrl+C and the deadline stop the run the same way; only the result tells them apart.
  const stop = deadline ? AbortSignal.any([o.signal, deadline.signal]) : o.signal;
  const onAbort = () => agent.system.interruptAll();
  stop.addEventListener('abort', onAbort);
  let outcome: Outcome | undefined;
  let timedOut = false;
  const loop = whenLoopDrains();
  try {
    // A conversation's tools are fixed at its first request (thinking is bound to them): its MCP
    // servers' tools go in with it, so the task waits for them to start or fail.
    if (agent.mcp && !stop.aborted) await Promise.race([agent.mcp.settled(), new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }))]);
    await agent.system.sendUserText(session.id, task.message);
    await streamInit;
    // Past the deadline while the session opened: the task is stored (for -c), and stopped at once.
    if (stop.aborted) onAbort();
    const end = await agent.system.whenQuiescent({ signal: stop, stalled: loop.drained });
    timingMark('quiescent', () => end.kind);
    timedOut = end.kind === 'aborted' && !o.signal.aborted;
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
    outcome = await finish(agent, root, o, { stalled: end.kind === 'stalled', unfinished: end.kind !== 'quiescent' });
  } finally {
    loop.dispose();
    deadline?.dispose();
    stop.removeEventListener('abort', onAbort);
    // Sandboxes are kept for the next run (-c) unless everything reached the working tree.
    const settled = outcome !== undefined && !outcome.interrupted && !outcome.stalled && !timedOut &&
      outcome.unreported.length === 0 && (outcome.applied || outcome.filesChanged.length === 0);
    const closing = performance.now();
    await agent.close({ keep: !settled && o.throwaway !== true });
    timed('close', closing);
  }
  const result = buildResult(session.id, model, tally, outcome, pricingOf(setup.config), performance.now() - started);
  if (o.outputFormat === 'text') report(o.writers, outcome);
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

function report(w: HeadlessWriters, o: Outcome): void {
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
        `The patch is at ${o.patchFile}; apply it with \`git apply --3way ${o.patchFile}\`.` +
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
