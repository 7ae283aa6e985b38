import type { Sandbox } from '@infinity-code/sandbox';

/** A command about to run, as the user is asked about it. */
export interface CommandRequest {
  threadId: string;
  callId: string;
  command: string;
}

/**
 * What execute_command does where the sandbox cannot confine commands (`Sandbox.contained` is
 * false: they would see the whole machine, its network and the user's files). Such a command
 * never runs silently:
 * - refuse: the model is told commands can't run here (`hint` says what the user could do);
 *   `onRefused` lets the host tell the user too;
 * - ask: `ask` decides each command (a UI asks the user); aborting `signal` withdraws the question;
 * - allow: run anyway (the user said so up front).
 */
export type UncontainedPolicy =
  | { kind: 'refuse'; hint?: string; onRefused?: (request: CommandRequest) => void }
  | { kind: 'ask'; ask: (request: CommandRequest, signal: AbortSignal) => Promise<boolean> }
  | { kind: 'allow' };

export const REFUSED_UNCONTAINED =
  'commands cannot run here: this machine offers no way to confine them to your sandbox (they would reach the ' +
  "user's files, credentials and network), and the user has not allowed unconfined commands. Work with the file " +
  'tools (read_file, edit_file, create_file, grep, list_files) instead, and tell the user which commands to run ' +
  'themselves.';

export const DECLINED_UNCONTAINED =
  'the user declined to run this command. Commands here run without confinement, so the user approves each one. ' +
  'Do it another way, or explain why the command is needed and ask the user.';

/**
 * Resolves to undefined when the command may run, or to the reason it may not (for the model).
 * Our own uses of the sandbox (ripgrep for grep and list_files) don't come through here.
 */
export async function gateCommand(
  policy: UncontainedPolicy,
  sb: Sandbox,
  request: CommandRequest,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (sb.contained || policy.kind === 'allow') return undefined;
  if (policy.kind === 'refuse') {
    policy.onRefused?.(request);
    return policy.hint ? `${REFUSED_UNCONTAINED} ${policy.hint}` : REFUSED_UNCONTAINED;
  }
  return (await policy.ask(request, signal)) ? undefined : DECLINED_UNCONTAINED;
}
