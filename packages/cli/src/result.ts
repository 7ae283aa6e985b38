import { randomUUID } from 'node:crypto';
import type { Usage } from '@infinity-code/runtime';
import { maxTokensFor } from '@infinity-code/runtime/models';
import { EXIT, STOP_SIGNALS, UserError, type ExitCode, type StopSignal } from './exit-codes.js';
import type { PermissionDenial, RunTally } from './headless.js';
import { contextWindowFor } from './model-choice.js';
import type { Pricing } from './pricing.js';

export type RunStatus = 'success' | 'failed' | 'config_error' | 'usage_error' | 'unapplied' | 'limit' | 'interrupted';

/**
 * The last object of `--output-format json|stream-json`: what a script needs to know. Its first
 * fields are Claude Code's result message, so that scripts written for `claude -p` read it
 * unchanged (`jq -r .result`, `.session_id`, `.total_cost_usd`, `.is_error`); the rest are ours.
 */
export interface RunResult {
  type: 'result';
  subtype: 'success' | 'error_max_turns' | 'error_during_execution' | 'error_max_budget_usd';
  is_error: boolean;
  duration_ms: number;
  /** Time spent on the API, every thread's completions summed (they may overlap: it can exceed duration_ms). */
  duration_api_ms: number;
  /** Model completions, every thread's. */
  num_turns: number;
  /** The root thread's final answer; when the run failed before the model answered, why. */
  result: string;
  /** Why the root's last reply ended (the API's stop_reason); null when it made none or it was cancelled. */
  stop_reason: string | null;
  /**
   * The session's id (for -r). A run that failed before a session was opened has a fresh id that
   * names no stored session, as Claude Code's does.
   */
  session_id: string;
  /** This run's completions, each priced with its model; null when one of them has no price. */
  total_cost_usd: number | null;
  usage: Usage;
  /** Per model the run's completions used, in Claude Code's shape. */
  modelUsage: Record<string, ModelUsage>;
  permission_denials: PermissionDenial[];
  uuid: string;
  /** What went wrong, one message each (Claude Code's); `error_details` has them with their kinds. */
  errors: string[];
  status: RunStatus;
  exit_code: ExitCode;
  model: string;
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
  error_details: Array<{ kind: string; message: string }>;
}

/** Claude Code's per-model usage entry of a result. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** The runtime offers no server tools: always 0. */
  webSearchRequests: number;
  /** null when the model has no price (see total_cost_usd). */
  costUSD: number | null;
  contextWindow: number;
  maxOutputTokens: number;
}

/** A model's limits as the session uses them (the config may set the context window). */
export type ModelLimits = (model: string) => { contextWindow: number; maxOutputTokens: number };

export function modelLimits(config: { contextWindow?: number } = {}): ModelLimits {
  return (model) => ({ contextWindow: contextWindowFor(model, config), maxOutputTokens: maxTokensFor(model) });
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

/** An outcome without changes: a turn's (see --input-format stream-json), a plan run's, or one that made none. */
export const NO_CHANGES: Outcome = {
  interrupted: false,
  stalled: false,
  filesChanged: [],
  applied: false,
  patchFile: null,
  conflicts: [],
  leftOut: [],
  unreported: [],
};

/** Exit code and status from what happened, in order of precedence (docs/architecture.md, *CLI contracts*). */
export function decide(tally: RunTally, o: Outcome): { status: RunStatus; code: ExitCode } {
  if (o.interrupted) return { status: 'interrupted', code: STOP_SIGNALS[o.stoppedBy ?? 'SIGINT'] };
  // A rejected key, or an API address that could never be reached: the user's settings to fix.
  if (tally.errors.some((e) => e.kind === 'auth' || e.kind === 'unreachable')) return { status: 'config_error', code: EXIT.config };
  if (tally.errors.some((e) => e.kind === 'budget' || e.kind === 'max_budget_usd')) return { status: 'limit', code: EXIT.limit };
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
  usage_error: 'error_during_execution',
  interrupted: 'error_during_execution',
};

export function buildResult(
  sessionId: string,
  model: string,
  tally: RunTally,
  o: Outcome,
  pricing: Pricing,
  durationMs: number,
  limits: ModelLimits = modelLimits(),
): RunResult {
  const { status, code } = decide(tally, o);
  // --max-budget-usd has a subtype of its own in Claude Code's results.
  const subtype = status === 'limit' && tally.errors.some((e) => e.kind === 'max_budget_usd') ? 'error_max_budget_usd' : SUBTYPE[status];
  return {
    type: 'result',
    subtype,
    is_error: subtype !== 'success',
    duration_ms: Math.round(durationMs),
    duration_api_ms: Math.round(tally.apiMs),
    num_turns: tally.completions,
    result: tally.answer,
    stop_reason: tally.stopReason,
    session_id: sessionId,
    total_cost_usd: totalCost(tally, pricing),
    usage: tally.usage,
    modelUsage: modelUsage(tally, pricing, limits),
    permission_denials: tally.permissionDenials,
    uuid: randomUUID(),
    errors: tally.errors.map((e) => e.message),
    status,
    exit_code: code,
    model,
    files_changed: o.filesChanged,
    diff_applied: o.applied,
    patch_file: o.patchFile,
    conflicts: o.conflicts,
    left_out: o.leftOut,
    unreported: o.unreported.map((u) => ({ thread_id: u.threadId, files: u.files })),
    error_details: tally.errors,
  };
}

/** What a run that ended on an exception knows of itself: nothing before its session opened. */
export interface FailedRun {
  sessionId?: string;
  model?: string;
  tally?: RunTally;
  pricing?: Pricing;
  limits?: ModelLimits;
  durationMs: number;
}

/**
 * The result of a run an exception ended (a bad config file, no API key, a git failure...), so
 * that `--output-format json|stream-json` prints a result on every exit path, as Claude Code
 * does. Its `result` is the error's message: what `jq -r .result` shows.
 */
export function failedResult(err: unknown, run: FailedRun): RunResult {
  const code = exitCodeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  const status: RunStatus = code === EXIT.usage ? 'usage_error' : code === EXIT.config ? 'config_error' : 'failed';
  const kind = code === EXIT.usage ? 'usage' : code === EXIT.config ? 'config' : 'fatal';
  const errors = [...(run.tally?.errors ?? []), { kind, message }];
  return {
    type: 'result',
    subtype: 'error_during_execution',
    is_error: true,
    duration_ms: Math.round(run.durationMs),
    duration_api_ms: Math.round(run.tally?.apiMs ?? 0),
    num_turns: run.tally?.completions ?? 0,
    result: message,
    stop_reason: run.tally?.stopReason ?? null,
    session_id: run.sessionId ?? randomUUID(),
    total_cost_usd: run.tally && run.pricing ? totalCost(run.tally, run.pricing) : 0,
    usage: run.tally?.usage ?? { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    modelUsage: run.tally && run.pricing ? modelUsage(run.tally, run.pricing, run.limits ?? modelLimits()) : {},
    permission_denials: run.tally?.permissionDenials ?? [],
    uuid: randomUUID(),
    errors: errors.map((e) => e.message),
    status,
    exit_code: code,
    model: run.model ?? '',
    files_changed: [],
    diff_applied: false,
    patch_file: null,
    conflicts: [],
    left_out: [],
    unreported: [],
    error_details: errors,
  };
}

/** The exit code an exception ends the process with: a UserError's own, otherwise a failure. */
export function exitCodeOf(err: unknown): ExitCode {
  return err instanceof UserError ? err.exitCode : EXIT.failed;
}

/**
 * Marks an error whose result object is already on stdout, so that the CLI's last-resort handler
 * does not print a second one. A property with a registered symbol, not a WeakSet: the headless
 * run is a bundle of its own, with its own copy of this module (see exit-codes.ts).
 */
const RESULT_PRINTED = Symbol.for('infinity-code.resultPrinted');

export function markResultPrinted(err: unknown): void {
  if (typeof err === 'object' && err !== null) (err as { [RESULT_PRINTED]?: true })[RESULT_PRINTED] = true;
}

export function resultPrinted(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { [RESULT_PRINTED]?: true })[RESULT_PRINTED] === true;
}

function modelUsage(tally: RunTally, pricing: Pricing, limits: ModelLimits): Record<string, ModelUsage> {
  const out: Record<string, ModelUsage> = {};
  for (const [model, m] of tally.byModel) {
    let cost: number | null = 0;
    for (const usage of m.each) {
      const c = pricing.cost(model, usage);
      cost = c === undefined || cost === null ? null : cost + c;
    }
    out[model] = {
      inputTokens: m.usage.input_tokens,
      outputTokens: m.usage.output_tokens,
      cacheReadInputTokens: m.usage.cache_read_input_tokens,
      cacheCreationInputTokens: m.usage.cache_creation_input_tokens,
      webSearchRequests: 0,
      costUSD: cost === null ? null : Math.round(cost * 1e6) / 1e6,
      ...limits(model),
    };
  }
  return out;
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
