import { SECRET_ENV_VARS } from '@infinity-code/sandbox/secret-env';
import type { Sandbox } from '@infinity-code/sandbox';
import type { CommandRequest, UncontainedPolicy } from './command-gate.js';

/** When `execute_command` answers, how it batches streamed output, and how much it keeps. */
export interface CommandTimeouts {
  /**
   * How long a call waits for its command unless the model says otherwise (its `timeout`):
   * a command that exits within it answers with its output, one still running then goes on in
   * the background (default 120000 ms, as long as Claude Code's shell waits).
   */
  waitMs?: number;
  /** The longest wait the model may ask for (default 600000 ms). */
  maxWaitMs?: number;
  /** Background output is stored (quietly, waking nobody) at most this often (default 2000 ms). */
  batchMs?: number;
  /** ...or as soon as this much output is waiting (default 8000 bytes). */
  batchBytes?: number;
  /**
   * The longest a command may run at all, in the background too (default 30 minutes): then its
   * process group is killed. Without it a command that never exits keeps its thread (and a
   * headless run) waiting forever.
   */
  maxRunMs?: number;
}

/** How much command output reaches the model: the first lines, then only a tail. */
export interface OutputLimits {
  /** Lines kept from the start of the output (default 250). */
  headLines?: number;
  /** ...or fewer, once they hold this many characters (default 20000). */
  headChars?: number;
  /** Lines kept from the end once the head is full (default 80). */
  tailLines?: number;
  /** ...or fewer, once they hold this many characters (default 10000). */
  tailChars?: number;
  /** Longer lines are cut, saying how much was cut (default 1000 characters). */
  maxLineChars?: number;
}

export interface CodingToolsOptions {
  /** The calling thread's sandbox; every tool acts in it, never in the user's working tree. */
  sandboxFor: (threadId: string) => Promise<Sandbox>;
  /**
   * The user's repository root. Absolute paths under it are accepted (mapped to repo-relative
   * ones), and commands that name it are refused when the sandbox is a copy elsewhere (they
   * would reach the user's real files).
   */
  repoRoot?: string;
  commandTimeouts?: CommandTimeouts;
  outputLimits?: OutputLimits;
  /**
   * Variables removed from every command's environment, besides those the sandbox already keeps
   * from every process it starts (anything that looks like a credential).
   */
  secretEnvNames?: readonly string[];
  /**
   * Variables passed to commands although they look like credentials (the user named them);
   * never the Anthropic credentials, and never one of `secretEnvNames`.
   */
  envAllow?: readonly string[];
  /**
   * What the user is told about raising `commandTimeouts.maxRunMs`, after "stopped at the time
   * limit" (the tools don't know where the setting lives).
   */
  timeLimitHelp?: string;
  /** What execute_command does where the sandbox cannot confine commands; refuses by default. */
  uncontained?: UncontainedPolicy;
  /**
   * Asks whether a command that failed for lack of network (the sandbox has none) may run again
   * with the machine's network (a UI asks the user; aborting `signal` withdraws the question).
   * Absent: such a command's failure is its answer.
   */
  askNetwork?: (request: CommandRequest, signal: AbortSignal) => Promise<boolean>;
  /** Aborting it kills every command still running (the host is shutting down). */
  signal?: AbortSignal;
  /** The shell commands run in: bash by default where the machine has it; '' for /bin/sh. */
  shell?: string;
}

export const DEFAULT_TIMEOUTS: Required<CommandTimeouts> = {
  waitMs: 120_000,
  maxWaitMs: 600_000,
  batchMs: 2_000,
  batchBytes: 8_000,
  maxRunMs: 30 * 60_000,
};

export const DEFAULT_OUTPUT_LIMITS: Required<OutputLimits> = {
  headLines: 250,
  headChars: 20_000,
  tailLines: 80,
  tailChars: 10_000,
  maxLineChars: 1_000,
};

/** Always removed: a command must never see the credentials the agent itself runs on. */
export const ALWAYS_SECRET_ENV = SECRET_ENV_VARS;
