import type { AsyncTool, AsyncToolContext, CancelOptions, ToolContext } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { CallOrder, ORDER_NOTE } from './call-order.js';
import { commandEnv } from './command-env.js';
import { gateCommand, type UncontainedPolicy } from './command-gate.js';
import { CommandRun, type CommandPhase, type CommandWait } from './command-run.js';
import { commandShell } from './command-shell.js';
import { DEFAULT_OUTPUT_LIMITS, DEFAULT_TIMEOUTS, type CodingToolsOptions } from './options.js';
import { short } from './tool-kit.js';
import type { CommandTimeouts } from './options.js';

/** A running command, as UIs and tests see it. */
export interface RunningCommandInfo {
  threadId: string;
  callId: string;
  command: string;
  phase: CommandPhase;
  /** Host pid of the command's process-group leader (the group id too), once started. */
  pid: number | undefined;
  startedAt: number;
}

export interface ExecuteCommandTool extends AsyncTool {
  /** Commands running now (one entry per call, removed when the call is over). */
  running(): RunningCommandInfo[];
  /** Resolves when no command runs (every answer handed to the runtime). */
  whenIdle(): Promise<void>;
}

const DEFAULT_TIME_LIMIT_HELP = 'Split long work into shorter commands, or ask the user to raise the limit.';

export const RESTARTED_MESSAGE =
  '[the command was stopped because Infinity Code restarted while it ran; its later output is lost. ' +
  'Check its effects and run it again if needed.]';

/**
 * `execute_command {command}`: a shell command in the calling thread's sandbox (its merged view,
 * from the repository root), as a subscribed background tool. Per-call state lives in `runs`
 * only while the command runs: idle threads hold nothing here. `order` is the file tools' call
 * order (a command waits for the file changes asked before it); alone, commands wait for nothing.
 */
export function executeCommandTool(opts: CodingToolsOptions, order: CallOrder = new CallOrder()): ExecuteCommandTool {
  const runs = new Map<string, CommandRun>();
  let waiters: Array<() => void> = [];
  const key = (threadId: string, callId: string): string => `${threadId}\u0000${callId}`;
  const timeouts = { ...DEFAULT_TIMEOUTS, ...opts.commandTimeouts };
  const limits = { ...DEFAULT_OUTPUT_LIMITS, ...opts.outputLimits };
  const env = () => commandEnv({ secretNames: opts.secretEnvNames ?? [], allow: opts.envAllow ?? [] });
  const policy: UncontainedPolicy = opts.uncontained ?? { kind: 'refuse' };
  const timeLimitHelp = opts.timeLimitHelp ?? DEFAULT_TIME_LIMIT_HELP;
  const repoRoot = opts.repoRoot;
  const { name: shellName, path: shell } = commandShell(opts.shell);

  opts.signal?.addEventListener('abort', () => {
    for (const run of runs.values()) run.cancel();
  }, { once: true });

  const check = (command: string, sb: Sandbox): string | undefined => {
    if (command.trim() === '') return 'command is empty. Give a shell command to run.';
    // On the copy backend the sandbox lives elsewhere, so the user's real path would escape it.
    if (repoRoot && sb.root !== repoRoot && command.includes(repoRoot)) {
      return (
        `the command names ${repoRoot}, the user's own repository, but commands run in a sandboxed copy of it ` +
        `(${sb.root}) and must not touch the original. Use paths relative to the repository root, which is the ` +
        'working directory.'
      );
    }
    if (opts.signal?.aborted) return 'Infinity Code is shutting down; no new commands are started.';
    return undefined;
  };

  return {
    kind: 'async',
    name: 'execute_command',
    description:
      `Run a command with ${shellName} from the repository root, in your sandbox: it sees your edits, and what it ` +
      'writes stays in the sandbox. The call waits for the command up to `timeout` ms ' +
      `(default ${timeouts.waitMs}, at most ${timeouts.maxWaitMs}) and returns its output and exit code. A ` +
      'command still running then goes on in the background, as one started with run_in_background does (use ' +
      'that for servers and watchers): you are woken once when it exits, or when a line of its output matches ' +
      'notify_on, and its output since then arrives with that wake as a receive_event__injected call; stop it ' +
      'with cancel_subscription. Long output is cut to its first and last lines. Nothing can be typed into it: ' +
      `use non-interactive flags. A command still running after ${Math.round(timeouts.maxRunMs / 60_000)} min is ` +
      `stopped. ${ORDER_NOTE.command}`,
    input_schema: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command to run.' },
        description: { type: 'string', description: 'What it does, in a few words (shown to the user).' },
        timeout: { type: 'integer', minimum: 0, description: `How long to wait for it, in ms (at most ${timeouts.maxWaitMs}).` },
        run_in_background: { type: 'boolean', description: "Don't wait: it runs in the background from the start." },
        notify_on: { type: 'string', description: 'Regular expression: a matching line of output ends the wait, and wakes you while it runs in the background.' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    display: (input) => (typeof input.description === 'string' && input.description.trim() !== '' ? `$ ${short(input.command, 80)}  # ${short(input.description, 40)}` : `$ ${short(input.command, 100)}`),
    dispatch(input, ctx: AsyncToolContext) {
      const k = key(ctx.threadId, ctx.call.id);
      const wait = commandWait(input, timeouts);
      if (typeof wait === 'string') return ctx.respond({ content: `Error: ${wait}`, isError: true });
      const run = new CommandRun(ctx, String(input.command), {
        sandbox: () => opts.sandboxFor(ctx.threadId),
        wait,
        ...(shell ? { shell } : {}),
        env,
        timeouts,
        limits,
        timeLimitHelp,
        check,
        turn: order.enter(ctx.threadId, ctx.call.id, 'command'),
        gate: (command, sb, signal) => gateCommand(policy, sb, { threadId: ctx.threadId, callId: ctx.call.id, command }, signal),
        ...(opts.askNetwork
          ? { askNetwork: (signal: AbortSignal) => opts.askNetwork!({ threadId: ctx.threadId, callId: ctx.call.id, command: String(input.command) }, signal) }
          : {}),
        onSettled: () => {
          runs.delete(k);
          if (runs.size === 0) {
            const ready = waiters;
            waiters = [];
            for (const resolve of ready) resolve();
          }
        },
      });
      runs.set(k, run);
      run.start();
    },
    background(ctx: ToolContext) {
      runs.get(key(ctx.threadId, ctx.call.id))?.toBackground();
    },
    // Only a command that runs: one still waiting for its turn or the user's approval is cancelled.
    canBackground: (ctx: ToolContext) => runs.get(key(ctx.threadId, ctx.call.id))?.phase === 'fast',
    cancel(ctx: ToolContext, how?: CancelOptions) {
      runs.get(key(ctx.threadId, ctx.call.id))?.cancel(how?.byUser === true);
    },
    resume(ctx: AsyncToolContext) {
      // The process died with the previous one: end the subscription instead of leaving it open.
      void ctx
        .emit({ content: RESTARTED_MESSAGE, associative: true, final: true, id: `${ctx.call.id}:final`, display: { summary: 'stopped by a restart' } })
        .catch(() => undefined);
    },
    running: () =>
      [...runs.entries()].map(([k, run]) => {
        const [threadId, callId] = k.split('\u0000') as [string, string];
        return { threadId, callId, command: run.command, phase: run.phase, pid: run.pid, startedAt: run.startedAt };
      }),
    whenIdle: () => (runs.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  };
}

/** The model's wait for one call: its timeout (bounded), run_in_background, notify_on; or why not. */
export function commandWait(input: Record<string, unknown>, timeouts: Required<CommandTimeouts>): CommandWait | string {
  let notifyOn: RegExp | undefined;
  if (typeof input.notify_on === 'string' && input.notify_on !== '') {
    try {
      notifyOn = new RegExp(input.notify_on);
    } catch (err) {
      return `notify_on is not a valid regular expression (${(err as Error).message}). Give a JavaScript regular expression, e.g. "listening on|error".`;
    }
  }
  const asked = typeof input.timeout === 'number' && Number.isFinite(input.timeout) ? input.timeout : timeouts.waitMs;
  const waitMs = input.run_in_background === true ? 0 : Math.min(Math.max(asked, 0), timeouts.maxWaitMs);
  return notifyOn ? { waitMs, notifyOn } : { waitMs };
}
