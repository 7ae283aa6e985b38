import type { Usage } from '@infinity-code/runtime';
import { EXIT, STOP_SIGNALS, type ExitCode, type StopSignal } from './exit-codes.js';
import type { RunTally } from './headless.js';
import type { Pricing } from './pricing.js';

export type RunStatus = 'success' | 'failed' | 'config_error' | 'unapplied' | 'limit' | 'interrupted';

/**
 * The last object of `--output-format json|stream-json`: what a script needs to know. Its first
 * fields are Claude Code's result message (subtype, is_error, duration_ms, num_turns, result,
 * session_id, total_cost_usd, usage); the rest are ours.
 */
export interface RunResult {
  type: 'result';
  subtype: 'success' | 'error_max_turns' | 'error_during_execution';
  is_error: boolean;
  duration_ms: number;
  /** Model completions, every thread's. */
  num_turns: number;
  /** The root thread's final answer. */
  result: string;
  status: RunStatus;
  exit_code: ExitCode;
  session_id: string;
  model: string;
  usage: Usage;
  /** This run's completions, each priced with its model; null when one of them has no price. */
  total_cost_usd: number | null;
  files_changed: string[];
  diff_applied: boolean;
  patch_file: string | null;
  conflicts: string[];
  /**
   * Changes the agent made that were kept out of the working tree (and of the saved patch), each
   * with the reason: files in .git or .infinity, symlinks leading out of the repository, nested
   * repositories, files the user's tree has and ignores, files over the size limit.
   */
  left_out: LeftOutFile[];
  /** Changes children made but never reported (so never merged): listed, not dropped. */
  unreported: Array<{ thread_id: string; files: string[] }>;
  errors: Array<{ kind: string; message: string }>;
}

export interface LeftOutFile {
  path: string;
  /** Stable name of the rule (see OmitRule in the sandbox package), for scripts. */
  rule: string;
  reason: string;
  size?: number;
  target?: string;
}

export interface Outcome {
  interrupted: boolean;
  /** The signal that interrupted the run (SIGINT when not told). */
  stoppedBy?: StopSignal;
  /** Threads were still waiting for inputs that nothing could send any more. */
  stalled: boolean;
  filesChanged: string[];
  applied: boolean;
  patchFile: string | null;
  conflicts: string[];
  leftOut: LeftOutFile[];
  unreported: Array<{ threadId: string; files: string[] }>;
}

/** Exit code and status from what happened, in order of precedence (docs/architecture.md, *CLI contracts*). */
export function decide(tally: RunTally, o: Outcome): { status: RunStatus; code: ExitCode } {
  if (o.interrupted) return { status: 'interrupted', code: STOP_SIGNALS[o.stoppedBy ?? 'SIGINT'] };
  // A rejected key, or an API address that could never be reached: the user's settings to fix.
  if (tally.errors.some((e) => e.kind === 'auth' || e.kind === 'unreachable')) return { status: 'config_error', code: EXIT.config };
  if (tally.errors.some((e) => e.kind === 'budget')) return { status: 'limit', code: EXIT.limit };
  if (tally.errors.length > 0 || o.conflicts.length > 0) return { status: 'failed', code: EXIT.failed };
  if (o.filesChanged.length > 0 && !o.applied) return { status: 'unapplied', code: EXIT.unapplied };
  return { status: 'success', code: EXIT.ok };
}

/**
 * Claude Code's subtype for a status: a budget is its max-turns error; changes left for the user
 * to apply are a success of the run (the exit code, 4, still says so).
 */
const SUBTYPE: Record<RunStatus, RunResult['subtype']> = {
  success: 'success',
  unapplied: 'success',
  limit: 'error_max_turns',
  failed: 'error_during_execution',
  config_error: 'error_during_execution',
  interrupted: 'error_during_execution',
};

export function buildResult(sessionId: string, model: string, tally: RunTally, o: Outcome, pricing: Pricing, durationMs: number): RunResult {
  const { status, code } = decide(tally, o);
  const subtype = SUBTYPE[status];
  return {
    type: 'result',
    subtype,
    is_error: subtype !== 'success',
    duration_ms: Math.round(durationMs),
    num_turns: tally.completions,
    result: tally.answer,
    status,
    exit_code: code,
    session_id: sessionId,
    model,
    usage: tally.usage,
    total_cost_usd: totalCost(tally, pricing),
    files_changed: o.filesChanged,
    diff_applied: o.applied,
    patch_file: o.patchFile,
    conflicts: o.conflicts,
    left_out: o.leftOut,
    unreported: o.unreported.map((u) => ({ thread_id: u.threadId, files: u.files })),
    errors: tally.errors,
  };
}

/**
 * A partial sum would read as the whole cost to a script, so one unpriced model makes it null.
 * Each completion is priced on its own (its model, and its prompt for a tiered price). Rounded to
 * a millionth of a dollar: the sum of many small floats carries noise below that.
 */
export function totalCost(tally: RunTally, pricing: Pricing): number | null {
  let usd = 0;
  for (const [model, m] of tally.byModel) {
    for (const usage of m.each) {
      const cost = pricing.cost(model, usage);
      if (cost === undefined) return null;
      usd += cost;
    }
  }
  return Math.round(usd * 1e6) / 1e6;
}
