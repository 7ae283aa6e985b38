// What Tab does in the prompt: an `@` word before the cursor completes to a repository path, a
// line that is only `/word` to a command (built-in or the project's). Pure over the workspace.
import { completeMention } from '../path-completion.js';
import type { PromptWorkspace } from '../prompt-workspace.js';
import { complete as completeSlash } from './slash-commands.js';

export interface PromptCompletion {
  value: string;
  /** Where the cursor goes: after what was completed. */
  cursor: number;
  /** Shown under the prompt when several remain. */
  candidates: string[];
}

export type PromptCompleter = (value: string, cursor: number) => PromptCompletion;

/** Without a workspace (tests of the bare App), only the built-in commands complete. */
export function promptCompleter(workspace?: Pick<PromptWorkspace, 'paths' | 'commands' | 'base'>): PromptCompleter {
  return (value, cursor) => {
    if (workspace) {
      const mention = completeMentionIn(value, cursor, workspace.paths(), workspace.base ?? '');
      // Nothing matched: the file may be new since the list was made.
      if (mention && mention.candidates.length === 0 && mention.value === value) {
        return completeMentionIn(value, cursor, workspace.paths({ fresh: true }), workspace.base ?? '') ?? mention;
      }
      if (mention) return mention;
    }
    if (!value.startsWith('/')) return { value, cursor, candidates: [] };
    const slash = completeSlash(value, workspace?.commands().commands ?? []);
    if (slash.value === value && slash.candidates.length === 0) return { value, cursor, candidates: [] };
    return { value: slash.value, cursor: slash.value.length, candidates: slash.candidates.map((c) => `/${c}`) };
  };
}

/**
 * As mentions are read (see mentions.ts): the paths under the directory the user works in
 * (`base`), relative to it, first; the repository's from its root when none of those matches.
 */
function completeMentionIn(value: string, cursor: number, paths: readonly string[], base: string) {
  if (base === '') return completeMention(value, cursor, paths);
  const prefix = `${base}/`;
  const here = paths.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
  const mention = completeMention(value, cursor, here);
  if (mention && mention.candidates.length === 0 && mention.value === value) return completeMention(value, cursor, paths) ?? mention;
  return mention;
}
