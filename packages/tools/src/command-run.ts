import { StringDecoder } from 'node:string_decoder';
import type { AsyncToolContext, ToolDisplay, ToolOutput } from '@infinity-code/runtime';
import type { ExecProcess, ExecResult, Sandbox } from '@infinity-code/sandbox';
import type { CallTurn } from './call-order.js';
import { errorText } from './errors.js';
import type { CommandTimeouts, OutputLimits } from './options.js';
import { OutputBuffer } from './output-buffer.js';
import { ProgressLines } from './progress-lines.js';
import { lastLines } from './text-lines.js';

type ToolEvent = Parameters<AsyncToolContext['emit']>[0];

export interface CommandRunDeps {
  sandbox: () => Promise<Sandbox>;
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

/**
 * One execute_command call from start to end. It exists only while the command runs: the
 * process, its output buffer and its two timers go with it.
 *
 * - fast: the command may still answer inline; if it exits within the window its output and exit
 *   code are the tool result.
 * - streaming: the result said "still running" (flagged subscription); output goes out as
 *   associative events, batched by time and size, then one final event with the exit status.
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
  private timedOut = false;
  private chain: Promise<void> = Promise.resolve();
  private seq = 0;
  private fastTimer: NodeJS.Timeout | undefined;
  private batchTimer: NodeJS.Timeout | undefined;
  private limitTimer: NodeJS.Timeout | undefined;

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

  /** Kills the process group; the answer ("cancelled") follows when the command is gone. */
  cancel(): void {
    if (this.phase === 'finished' || this.cancelled) return;
    this.cancelled = true;
    // Still waiting for its turn: stop waiting at once (earlier file changes may take a while).
    this.deps.turn.leave();
    this.abort.abort();
  }

  private async run(): Promise<void> {
    const sb = await this.deps.sandbox();
    const refused = this.deps.check(this.command, sb);
    if (refused !== undefined) return this.answer({ content: `Error: ${refused}`, isError: true });
    const blocked = await this.deps.gate(this.command, sb, this.abort.signal);
    if (this.cancelled) return this.answer({ content: 'Command cancelled before it started.', isError: true });
    if (blocked !== undefined) return this.answer({ content: `Error: ${blocked}`, isError: true });
    // Waited for here, after the gate: earlier file changes went on meanwhile, even if the user was asked.
    const go = await this.deps.turn.ready;
    this.deps.turn.leave();
    if (!go || this.cancelled) return this.answer({ content: 'Command cancelled before it started.', isError: true });
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

  /** Runs the command once (the fast window and the time limit start anew), collecting its output. */
  private async execute(sb: Sandbox, network: boolean): Promise<ExecResult> {
    this.stopTimers();
    const proc = await sb.exec(this.command, { env: this.deps.env(), signal: this.abort.signal, ...(network ? { network: true } : {}) });
    this.pid = proc.pid;
    this.phase = 'fast';
    this.collect(proc);
    this.fastTimer = setTimeout(() => this.startStreaming(), this.deps.timeouts.fastWindowMs);
    this.fastTimer.unref();
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
    if (this.phase === 'fast') {
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

  private startStreaming(): void {
    if (this.phase !== 'fast') return;
    this.phase = 'streaming';
    const id = this.ctx.call.id;
    const soFar = this.buffer.take({ announceLimit: true });
    this.answer({
      subscription: true,
      content:
        `Command is still running after ${seconds(this.deps.timeouts.fastWindowMs)}; it continues in the background ` +
        `(subscription id: ${id}). Its further output will arrive as events, and a final event will carry the exit ` +
        `code. Keep working meanwhile, or stop it with cancel_subscription {"tool_call_id": "${id}"}.\n` +
        `Output so far:\n${soFar === '' ? '(none)' : soFar}`,
      display: shown('running in the background', soFar),
    });
    this.batchTimer = setInterval(() => this.flushBatch(true), this.deps.timeouts.batchMs);
    this.batchTimer.unref();
  }

  private flushBatch(timed = false): void {
    // A timed batch also sends a line still being written (a prompt, a progress line).
    if (timed) this.buffer.flushPartials();
    const text = this.buffer.take({ announceLimit: true });
    if (text !== '') this.emit({ content: text }, `output:${this.seq++}`);
  }

  private answer(output: ToolOutput): void {
    this.enqueue(() => this.ctx.respond(output));
  }

  private emit(event: ToolEvent, suffix: string): void {
    // Stable ids: a redelivered event is dropped as a duplicate, never shown twice.
    this.enqueue(() => this.ctx.emit({ ...event, associative: true, id: `${this.ctx.call.id}:${suffix}` }));
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
