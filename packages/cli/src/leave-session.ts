import type { AgentSession } from './agent-session.js';
import { discardedMessage, keptMessage, type QuitChoice } from './pending-changes.js';
import { describeApply, describeLeftOut } from './review.js';
import { savePatch } from './saved-patch.js';

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Ends an interactive session, its changes the working tree lacks first applied there, kept for
 * the next run (`-c`; also saved as a patch), or discarded (the session's sandboxes are deleted,
 * its conversation stays in the store). A choice that fails keeps them. Returns what to tell the
 * user once the UI has gone, when there is anything to tell.
 */
export async function leaveSession(
  agent: AgentSession,
  changes: QuitChoice,
  o: { root: string; cwd: string; folder?: boolean },
): Promise<string | undefined> {
  let keep = changes !== 'discard';
  let message: string | undefined;
  try {
    message = await settle(agent, changes, o);
  } catch (err) {
    const what = changes === 'apply' ? 'apply' : changes === 'keep' ? 'save a patch of' : 'discard';
    keep = true;
    message = `Could not ${what} the session's changes: ${errorText(err)} They are kept: run infinity-code -c, then /diff.`;
  }
  // Kept (or nothing left to keep): `infinity-code -c` continues over the same sandboxes.
  await agent.close({ keep });
  return message;
}

async function settle(agent: AgentSession, changes: QuitChoice, o: { root: string; cwd: string; folder?: boolean }): Promise<string | undefined> {
  const diff = await agent.rootDiff();
  if (diff.isEmpty) return undefined;
  const files = diff.files.map((f) => f.path);
  if (changes === 'discard') return discardedMessage(files);
  if (changes === 'keep') return keptMessage(files, savePatch(o.root, agent.rootId, diff.patchBytes, o.cwd), o.folder === true);
  const result = await agent.applyToWorkingTree(diff);
  const conflicts = result.conflicts.length > 0 ? ` Resolve the conflict markers in: ${result.conflicts.join(', ')}.` : '';
  const leftOut = describeLeftOut(diff.omitted);
  return `${describeApply(result, 'the working tree')}${conflicts}${leftOut ? ` ${leftOut}` : ''}`;
}
