// What `/bg` says, and how a stop is told: pure, over the UI state's background commands.
import { elapsedText } from './busy-label.js';
import { truncate } from './format.js';
import type { BackgroundCommand, ChildThread } from './ui-state.js';

export interface ThreadNames {
  rootThreadId: string;
  threads: readonly ChildThread[];
}

/** The thread a command belongs to, as the rows name it ("main" for the root). */
export function ownerOf(c: Pick<BackgroundCommand, 'threadId'>, names: ThreadNames): string {
  if (c.threadId === names.rootThreadId) return 'main';
  return names.threads.find((t) => t.id === c.threadId)?.label ?? 'a child thread';
}

/** `/bg`: each command with its thread, how long it has run and its last line of output. */
export function backgroundReport(commands: readonly BackgroundCommand[], names: ThreadNames, now: number): string {
  if (commands.length === 0) return 'Nothing runs in the background.';
  const rows = commands.map((c) => {
    const parts = [truncate(c.display, 80), ownerOf(c, names)];
    if (c.startedAt !== undefined) parts.push(elapsedText(now - c.startedAt));
    parts.push(c.tail.length > 0 ? truncate(c.tail[c.tail.length - 1].trim(), 100) : 'no output yet');
    return `  ${parts.join(' · ')}`;
  });
  const head = commands.length === 1 ? 'One command runs in the background:' : `${commands.length} commands run in the background:`;
  return [head, ...rows, '/stop (or Esc) stops them.'].join('\n');
}

/**
 * What a stop says: the model stopped, background commands stopped (named), and those left
 * running when only the model was stopped (Esc stops in steps).
 */
export function stoppedText(o: { model: boolean; commands: readonly BackgroundCommand[]; leftRunning: number }): string {
  const names = o.commands.map((c) => truncate(c.display, 60)).join(', ');
  const commands = o.commands.length === 1 ? 'the command running in the background' : `${o.commands.length} commands running in the background`;
  if (!o.model) return `Stopped ${commands}: ${names}.`;
  const withCommands = o.commands.length > 0 ? `, and ${commands} (${names})` : '';
  const left =
    o.leftRunning > 0
      ? ` ${o.leftRunning === 1 ? 'A command still runs' : `${o.leftRunning} commands still run`} in the background: /bg lists, Esc again or /stop stops ${o.leftRunning === 1 ? 'it' : 'them'}.`
      : '';
  return `Stopped${withCommands}. Send a message to go on.${left}`;
}
