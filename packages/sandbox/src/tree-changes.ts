import type { SessionContext } from './backend.js';
import type { GitRunner } from './git.js';
import { sealedGit } from './trusted-git.js';
import { nameBytes, nulNames } from './utf8-names.js';

/** One path that differs between two trees, as the second tree has it. */
export interface TreeChange {
  /** Names that are not UTF-8 escaped (see utf8-names.ts), so files are written under their own. */
  path: string;
  /** Git mode in the second tree; '000000' when the path is gone there. */
  mode: string;
  /** Object id in the second tree; all zeros when gone. */
  id: string;
}

const GONE = '000000';

/**
 * Every file, symlink and gitlink that differs between two trees, with what the second has
 * there. Renames are not paired (a rename is a deletion and an addition), so every path that
 * changed is listed. Cost follows the differences: identical subtrees are skipped unread.
 */
export async function treeChanges(ctx: SessionContext, from: string, to: string, git: GitRunner = sealedGit(ctx.plumbingGitDir)): Promise<TreeChange[]> {
  const out = await git(['diff-tree', '-r', '-z', '--no-renames', '--raw', from, to], {
    cwd: ctx.tmpDir,
    env: { ...ctx.objectEnv },
  });
  const fields = nulNames(out.stdout);
  const changes: TreeChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    // ":<old mode> <new mode> <old id> <new id> <status>"
    const [, mode, , id] = fields[i].replace(/^:/, '').split(' ');
    changes.push({ path: fields[i + 1], mode: mode, id: id });
  }
  return changes;
}

export function isGone(change: TreeChange): boolean {
  return change.mode === GONE;
}

/** `update-index -z --index-info` input that makes an index hold `changes` (gone paths removed). */
export function indexInfo(changes: readonly TreeChange[]): Buffer {
  return Buffer.concat(
    changes.flatMap((c) => [Buffer.from(isGone(c) ? `0 ${'0'.repeat(c.id.length)}\t` : `${c.mode} ${c.id}\t`), nameBytes(c.path), Buffer.of(0)]),
  );
}

/** Rewrites `index` in place so it holds `changes`; nothing is read from a work tree. */
export async function applyToIndex(
  ctx: SessionContext,
  index: string,
  changes: readonly TreeChange[],
  git: GitRunner = sealedGit(ctx.plumbingGitDir),
): Promise<void> {
  if (changes.length === 0) return;
  await git(['update-index', '-z', '--index-info'], {
    cwd: ctx.tmpDir,
    env: { ...ctx.objectEnv, GIT_INDEX_FILE: index },
    input: indexInfo(changes),
  });
}
