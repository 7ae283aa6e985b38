// Session changes the user's working tree has not received yet: what the TUI says about them
// after an answer, at start and on the way out. Plain text, no UI: the CLI prints the last one
// after the TUI has gone.
import { applyCommand } from './saved-patch.js';

/** What to do with those changes when the user leaves the TUI. */
export type QuitChoice = 'apply' | 'keep' | 'discard';

/** "1 file" / "3 files" */
export function fileCount(n: number): string {
  return n === 1 ? '1 file' : `${n} files`;
}

/** What refers to those files: "it" for one, "them" for more. */
export function them(n: number): string {
  return n === 1 ? 'it' : 'them';
}

/** Said after the agent's answer and when a session with such changes starts again. */
export function changesWaitLine(files: readonly string[]): string {
  const verb = files.length === 1 ? 'is' : 'are';
  return `${fileCount(files.length)} changed in this session ${verb} not in your working tree: /diff to review and apply.`;
}

/** Said when the user leaves with the changes kept: how to get them back (`folder`: a project in no repository). */
export function keptMessage(files: readonly string[], patchFile?: string, folder = false): string {
  const verb = files.length === 1 ? 'is' : 'are';
  const patch = patchFile ? ` Also saved as a patch: ${applyCommand(patchFile, folder)}` : '';
  return (
    `${fileCount(files.length)} changed in this session ${verb} not in your working tree (kept: ${files.join(', ')}). ` +
    `Run infinity-code -c, then /diff to review and apply ${them(files.length)}.${patch}`
  );
}

/** Said when the user leaves with the changes discarded. */
export function discardedMessage(files: readonly string[]): string {
  return `Discarded the session's changes to ${fileCount(files.length)}. The conversation stays: infinity-code -c continues it.`;
}

/** Said after `/new` when the session left behind has changes the working tree lacks. */
export function leftBehindLine(files: readonly string[], sessionId: string): string {
  const verb = files.length === 1 ? 'is' : 'are';
  return (
    `${fileCount(files.length)} changed in the previous session ${verb} not in your working tree: ` +
    `infinity-code -r ${sessionId.slice(0, 8)} brings ${them(files.length)} back (then /diff).`
  );
}
