import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import { EXIT, UserError } from './exit-codes.js';

/** The channel the packages publish their steps' timings on (see timing.ts in runtime and sandbox). */
const TIMING_CHANNEL = 'infinity-code:timing';

interface TimingMessage {
  what: string;
  ms?: number;
  detail?: string;
}

/** One line of the trace: ms since the process started, the step, how long it took, about what. */
export function timingLine(at: number, m: TimingMessage): string {
  return `[timing] ${at.toFixed(1)} ${m.what}${m.ms !== undefined ? ` ${m.ms.toFixed(1)}ms` : ''}${m.detail ? ` ${m.detail}` : ''}\n`;
}

/**
 * INFINITY_CODE_TRACE: where a run's time goes, one line per step (model requests and replies,
 * git runs, sandbox mounts, commands, diffs, the apply, the teardown). `1` writes the lines to
 * stderr; any other value is a file they are appended to (the TUI's screen would garble them).
 * Unset, nothing listens and the packages publish nothing.
 */
export function traceTimingFromEnv(env: NodeJS.ProcessEnv, stderr: (line: string) => void): void {
  const to = env.INFINITY_CODE_TRACE;
  if (!to) return;
  let write = stderr;
  if (to !== '1') {
    try {
      appendFileSync(to, '');
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new UserError(`INFINITY_CODE_TRACE names ${to}, which cannot be written (${why}): set it to 1 for stderr, or to a writable file.`, EXIT.config);
    }
    write = (line) => appendFileSync(to, line);
  }
  const line = (m: TimingMessage): void => {
    try {
      write(timingLine(performance.now(), m));
    } catch {
      // A trace that can no longer be written (disk full, file removed) must not end the run.
    }
  };
  subscribe(TIMING_CHANNEL, (m) => line(m as TimingMessage));
  // The CPU time this process used, all its threads: on a small machine what it takes is what
  // the commands and git processes it starts cannot have.
  process.once('exit', () => {
    const { user, system } = process.cpuUsage();
    line({ what: 'cpu', ms: (user + system) / 1000, detail: `user ${(user / 1000).toFixed(0)} sys ${(system / 1000).toFixed(0)}` });
  });
}
