import { StringDecoder } from 'node:string_decoder';
import type { AsyncToolContext, ToolDisplay, ToolOutput } from '@infinity-code/runtime';
import type { ExecProcess, ExecResult, Sandbox } from '@infinity-code/sandbox';
import type { CallTurn } from './call-order.js';
import { errorText } from './errors.js';
import type { CommandTimeouts, OutputLimits } from './options.js';
import { OutputBuffer } from './output-buffer.js';
import { ProgressLines } from './progress-lines.js';
import { cleanLine, visibleText } from './ansi.js';
import { lastLines } from './text-lines.js';
import { short } from './tool-kit.js';

type ToolEvent = Parameters<AsyncToolContext['emit']>[0];

/** How long the call waits for the command, and what else ends the wait (the model's choice). */
export interface CommandWait {
  /** The call answers when the command exits within this; 0: at once (run_in_background). */
  waitMs: number;
  /** A line of output matching this ends the wait, and later wakes the thread while it runs on. */
  notifyOn?: RegExp;
}

export interface CommandRunDeps {
  sandbox: () => Promise<Sandbox>;
  wait: CommandWait;
  /** The shell commands run in (bash where the machine has it); the sandbox's /bin/sh when unset. */
  shell?: string;
  /** The environment changes for the command, read when it starts. */
  env: () => Readonly<Record<string, string | undefined>>;
  timeouts: Required<CommandTimeouts>;
  limits: Required<OutputLimits>;
  /** Said after "stopped at the time limit": how to raise it. */
  timeLimitHelp: string;
  /** Refuses a command before it starts (returns the reason), e.g. one naming the user's tree. */
  check(command: string, sb: Sandbox): string | undefined;
  /**
   * Decides whether the command may run in this sandbox (returns the reason it may not); it may
   * wait for the user. Aborting `signal` (the call was cancelled) withdraws the question.
   */
  gate(command: string, sb: Sandbox, signal: AbortSignal): Promise<string | undefined>;
  /**
   * Whether a command that failed inline for lack of network (see looksOffline) may run again
   * with the machine's network; it may wait for the user. Absent: never (headless runs).
   */
  askNetwork?(signal: AbortSignal): Promise<boolean>;
  /**
   * The command's place in its thread's call order, taken at dispatch: it starts once the file
   * changes asked before it are over. Given up when the process starts (nothing waits for a
   * command), or when the call is cancelled or refused before that.
   */
  turn: CallTurn;
  /** Called once, when the run is over and every answer for it has been handed to the runtime. */
  onSettled(): void;
}

/** Heads the answer of a command run a second time with the machine's network. */
export const NETWORK_RERUN = "[the command failed without network (the sandbox has none), and the user let it run again with the machine's network; this is that run]";

// What failing for lack of network looks like in the output of common tools: DNS and routing
// errors only (a refused connection is as likely a server that is not up).
const OFFLINE = /EAI_AGAIN|ENOTFOUND|ENETUNREACH|getaddrinfo|Network is unreachable|Could not resolve host|Temporary failure in name resolution|Name or service not known|nodename nor servname/i;

/** True when a failed command's output says it could not reach the network. */
export function looksOffline(output: string): boolean {
  return OFFLINE.test(output);
}

/** Lines of a command's output a UI gets with its outcome. */
const SHOWN_LINES = 3;

/** How a run ended: the line the model reads, and the same in a few words for UIs. */
interface Ending {
  line: string;
  summary: string;
}

/** Where a run is: answering inline (fast), streaming as a subscription, or over. */
export type CommandPhase = 'starting' | 'fast' | 'streaming' | 'finished';

/** Why a call stopped waiting for its command, which goes on in the background. */
type BackgroundCause = { kind: 'wait' } | { kind: 'asked' } | { kind: 'match'; line: string };

/**
 * One execute_command call from start to end. It exists only while the command runs: the
 * process, its output buffer and its timers go with it.
 *
 * - fast: the call waits; if the command exits within the wait its output and exit code are the
 *   tool result.
 * - streaming: the result said "goes on in the background" (flagged subscription), because the
 *   wait ran out, the model asked for the background, a line matched its notify_on, or the user
 *   wrote meanwhile (the runtime answered then). Output goes out as quiet associative events,
 *   batched by time and size: stored, correlated, but waking nobody. The thread is woken by the
 *   final event with the exit status, or by a line matching notify_on (at most once a batch).
 * Every answer goes through one promise chain, so the runtime gets the result before any event
 * and the events in order. Whatever the phase, the command is killed at `timeouts.maxRunMs`.
 */
export class CommandRun {
  phase: CommandPhase = 'starting';
  pid: number | undefined;
  readonly startedAt = Date.now();
  private readonly abort = new AbortController();
  private buffer: OutputBuffer;
  private cancelled = false;
  /** Cancelled by the user from the UI (see CancelOptions.byUser): its end is said quietly, as theirs. */
  private stoppedByUser = false;
  private timedOut = false;
  private chain: Promise<void> = Promise.resolve();
  private seq = 0;
  private fastTimer: NodeJS.Timeout | undefined;
  private batchTimer: NodeJS.Timeout | undefined;
  private limitTimer: NodeJS.Timeout | undefined;
  /** The call has its result (the runtime gave it, or the run did): what follows are events. */
  private resultGiven = false;
  /** A line matched notify_on since the last wake: the next batch wakes the thread. */
  private wakeDue: string | undefined;
  private lastWakeAt = 0;
  private readonly notifyPartial = { stdout: '', stderr: '' };

  constructor(
    private readonly ctx: AsyncToolContext,
    readonly command: string,
    private readonly deps: CommandRunDeps,
  ) {
    this.buffer = new OutputBuffer(deps.limits);
  }

  /** Starts the work without waiting for it (dispatch must return quickly). */
  start(): void {
    void this.run()
      .catch((err: unknown) => {
        // Once streaming, the result was given: the failure ends the subscription instead.
        if (this.phase === 'streaming') this.emit({ content: errorText(err), isError: true, final: true }, 'final');
        else this.answer({ content: errorText(err), isError: true });
      })
      .finally(() => {
        this.deps.turn.leave();
        this.stopTimers();
        this.phase = 'finished';
        void this.chain.then(() => this.deps.onSettled());
      });
  }

  /**
   * The runtime answered the call (the user wrote while it waited): the command goes on, and
   * everything from now on is an event of the subscription the runtime started for it.
   */
  toBackground(): void {
    if (this.phase === 'finished' || this.resultGiven) return;
    this.resultGiven = true;
    if (this.phase === 'fast') this.streamInBackground();
  }

  /**
   * Kills the process group; the answer ("cancelled", or "stopped by the user") follows when the
   * command is gone.
   */
  cancel(byUser = false): void {
    if (this.phase === 'finished' || this.cancelled) return;
    this.cancelled = true;
    this.stoppedByUser = byUser;
    // Still waiting for its turn: stop waiting at once (earlier file changes may take a while).
    this.deps.turn.leave();
    this.abort.abort();
  }

  private async run(): Promise<void> {
    const sb = await this.deps.sandbox();
    const refused = this.deps.check(this.command, sb);
    if (refused !== undefined) return this.answer({ content: `Error: ${refused}`, isError: true });
    const blocked = await this.deps.gate(this.command, sb, this.abort.signal);
    if (this.cancelled) return this.answer({ content: this.notStarted(), isError: true });
    if (blocked !== undefined) return this.answer({ content: `Error: ${blocked}`, isError: true });
    // Waited for here, after the gate: earlier file changes went on meanwhile, even if the user was asked.
    const go = await this.deps.turn.ready;
    this.deps.turn.leave();
    if (!go || this.cancelled) return this.answer({ content: this.notStarted(), isError: true });
    // The abort signal kills the command's whole process group (the sandbox sees to it).
    const result = await this.execute(sb, false);
    if (this.phase !== 'fast' || this.cancelled || this.timedOut || result.exitCode === 0 || !this.deps.askNetwork) {
      return this.finish(result, '');
    }
    const output = this.buffer.rest();
    if (looksOffline(output) && (await this.deps.askNetwork(this.abort.signal)) && !this.cancelled) {
      // The user let this one command use the machine's network: run it again, and say so.
      this.buffer = new OutputBuffer(this.deps.limits);
      return this.finish(await this.execute(sb, true), `${NETWORK_RERUN}\n`, undefined, true);
    }
    return this.finish(result, '', output);
  }

  private notStarted(): string {
    return this.stoppedByUser ? 'The user stopped the command before it started.' : 'Command cancelled before it started.';
  }

  /** Runs the command once (the fast window and the time limit start anew), collecting its output. */
  private async execute(sb: Sandbox, network: boolean): Promise<ExecResult> {
    this.stopTimers();
    const proc = await sb.exec(this.command, {
      env: this.deps.env(),
      signal: this.abort.signal,
      ...(this.deps.shell ? { shell: this.deps.shell } : {}),
      ...(network ? { network: true } : {}),
    });
    this.pid = proc.pid;
    this.phase = 'fast';
    this.collect(proc);
    if (this.resultGiven) this.streamInBackground();
    else if (this.deps.wait.waitMs <= 0) this.startStreaming({ kind: 'asked' });
    else {
      this.fastTimer = setTimeout(() => this.startStreaming({ kind: 'wait' }), this.deps.wait.waitMs);
      this.fastTimer.unref();
    }
    this.limitTimer = setTimeout(() => this.stopAtLimit(), this.deps.timeouts.maxRunMs);
    this.limitTimer.unref();
    const result = await proc.done;
    this.stopTimers();
    this.buffer.flushPartials();
    return result;
  }

  /**
   * Answers with the run's output (`output` when it was taken already) and exit status.
   * `rerun`: this was the run again with the machine's network (`note` says so to the model).
   */
  private finish(result: ExecResult, note: string, output?: string, rerun = false): void {
    const end = this.ending(result);
    this.ctx.progress(end.line, { final: true });
    const summary = rerun ? `${end.summary}, run again with the machine's network` : end.summary;
    if (this.phase === 'fast' && !this.resultGiven) {
      // Cancelled while answering inline means the call was interrupted: the runtime has already
      // closed it and drops this answer, but expects one.
      const out = output ?? this.buffer.rest();
      return this.answer({
        content: `${note}${out === '' ? '(no output)' : out}\n${end.line}`,
        isError: this.cancelled || this.timedOut,
        display: shown(summary, out),
      });
    }
    const rest = this.buffer.rest();
    this.emit({ content: rest === '' ? `${note}${end.line}` : `${note}${rest}\n${end.line}`, final: true, display: shown(summary, rest) }, 'final');
  }

  private ending(result: ExecResult): Ending {
    if (this.timedOut) return { line: this.limitLine(), summary: 'stopped at the time limit' };
    if (this.stoppedByUser) return { line: '[stopped by the user]', summary: 'stopped by you' };
    if (this.cancelled) return { line: '[cancelled]', summary: 'cancelled' };
    const status = exitStatus(result);
    // The sandbox's storage is over its disk limit: the model must know why writes fail, and what to do.
    if (result.diskLimit !== undefined) return { line: `${status.line}\n[${result.diskLimit}]`, summary: `${status.summary}, over the disk limit` };
    return status;
  }

  /** Kills the process group, like a cancel, but the command's answer says why. */
  private stopAtLimit(): void {
    if (this.phase === 'finished' || this.cancelled) return;
    this.timedOut = true;
    this.abort.abort();
  }

  private limitLine(): string {
    return `[stopped after ${seconds(this.deps.timeouts.maxRunMs)}, at the time limit for a command. ${this.deps.timeLimitHelp}]`;
  }

  private collect(proc: ExecProcess): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const decoder = new StringDecoder('utf8');
      const live = new ProgressLines();
      proc[stream].on('data', (b: Buffer) => {
        const text = decoder.write(b);
        this.buffer.write(stream, text);
        this.showProgress(live.push(text));
        if (this.deps.wait.notifyOn) this.watchFor(stream, text, this.deps.wait.notifyOn);
        if (this.phase === 'streaming' && this.buffer.pendingChars >= this.deps.timeouts.batchBytes) this.flushBatch();
      });
      proc[stream].on('end', () => {
        const text = decoder.end();
        this.buffer.write(stream, text);
        this.showProgress([...live.push(text), ...live.flush()]);
      });
    }
  }

  private showProgress(lines: string[]): void {
    if (lines.length > 0) this.ctx.progress(lines.join('\n'));
  }

  /** Looks for notify_on in the complete lines of `text`; a match ends the wait or wakes the thread. */
  private watchFor(stream: 'stdout' | 'stderr', text: string, pattern: RegExp): void {
    const lines = (this.notifyPartial[stream] + text).split('\n');
    // An unfinished line is kept (bounded) to be matched whole once it ends.
    this.notifyPartial[stream] = lines.pop()!.slice(-4_000);
    const line = lines.map((l) => visibleText(cleanLine(l))).find((l) => pattern.test(l));
    if (line === undefined) return;
    if (this.phase === 'fast' && !this.resultGiven) return this.startStreaming({ kind: 'match', line: short(line) });
    if (this.phase !== 'streaming') return;
    this.wakeDue ??= short(line);
    // At most one wake per batch interval: a pattern matching every line must not wake the model on each.
    if (Date.now() - this.lastWakeAt >= this.deps.timeouts.batchMs) this.flushBatch();
  }

  private startStreaming(cause: BackgroundCause): void {
    if (this.phase !== 'fast' || this.resultGiven) return;
    this.resultGiven = true;
    const id = this.ctx.call.id;
    const soFar = this.buffer.take({ announceLimit: true });
    const opening =
      cause.kind === 'wait'
        ? `The command is still running after ${seconds(this.deps.wait.waitMs)}; it goes on in the background`
        : cause.kind === 'asked'
          ? 'The command runs in the background'
          : `A line of output matched notify_on: ${cause.line}\nThe command goes on in the background`;
    this.answer({
      subscription: true,
      content:
        `${opening} (subscription id: ${id}). You will be woken when it exits${this.deps.wait.notifyOn ? ' or when a line matches notify_on' : ''}, ` +
        `with its output since then; keep working meanwhile, or stop it with cancel_subscription {"tool_call_id": "${id}"}.\n` +
        `Output so far:\n${soFar === '' ? '(none)' : soFar}`,
      display: shown('running in the background', soFar),
    });
    this.streamInBackground();
  }

  /** From now on output goes out in quiet batches (no result was ever pending on them). */
  private streamInBackground(): void {
    clearTimeout(this.fastTimer);
    this.fastTimer = undefined;
    this.phase = 'streaming';
    this.lastWakeAt = Date.now();
    this.batchTimer = setInterval(() => this.flushBatch(true), this.deps.timeouts.batchMs);
    this.batchTimer.unref();
  }

  private flushBatch(timed = false): void {
    // A timed batch also sends a line still being written (a prompt, a progress line).
    if (timed) this.buffer.flushPartials();
    const text = this.buffer.take({ announceLimit: true });
    const wake = this.wakeDue;
    if (wake === undefined) {
      if (text !== '') this.emit({ content: text, quiet: true }, `output:${this.seq++}`);
      return;
    }
    this.wakeDue = undefined;
    this.lastWakeAt = Date.now();
    const note = `[woken: a line matched notify_on: ${wake}; the command goes on]`;
    this.emit({ content: text === '' ? note : `${text}\n${note}` }, `output:${this.seq++}`);
  }

  private answer(output: ToolOutput): void {
    if (this.resultGiven && output.subscription !== true) {
      // The runtime answered the call already (moved to the background before the command
      // started or ended): this ends the subscription instead.
      const { content, isError, display } = output;
      return this.emit({ content, final: true, ...(isError ? { isError } : {}), ...(display ? { display } : {}) }, 'final');
    }
    this.enqueue(() => this.ctx.respond(output));
  }

  private emit(event: ToolEvent, suffix: string): void {
    // The user stopped it: the thread hears so with whatever wakes it next, and isn't woken to carry on.
    const quiet = event.final === true && this.stoppedByUser ? { quiet: true } : {};
    // Stable ids: a redelivered event is dropped as a duplicate, never shown twice.
    this.enqueue(() => this.ctx.emit({ ...event, ...quiet, associative: true, id: `${this.ctx.call.id}:${suffix}` }));
  }

  private enqueue(send: () => Promise<void>): void {
    this.chain = this.chain.then(send).catch((err: unknown) => {
      // The runtime is closing; nothing more can be delivered for this call.
      process.emitWarning(`execute_command: could not deliver output: ${(err as Error).message}`);
    });
  }

  private stopTimers(): void {
    clearTimeout(this.fastTimer);
    clearInterval(this.batchTimer);
    clearTimeout(this.limitTimer);
    this.fastTimer = undefined;
    this.batchTimer = undefined;
    this.limitTimer = undefined;
  }
}

function exitStatus(r: ExecResult): Ending {
  if (r.exitCode !== null) return { line: `[exit code: ${r.exitCode}]`, summary: `exit code ${r.exitCode}` };
  const signal = r.signal ?? 'unknown';
  return { line: `[killed by signal ${signal}]`, summary: `killed by signal ${signal}` };
}

/** What UIs show of a run: its outcome, and the last lines of its output. */
function shown(summary: string, output: string): ToolDisplay {
  const lines = lastLines(output, SHOWN_LINES);
  return lines.length > 0 ? { summary, output: lines } : { summary };
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
