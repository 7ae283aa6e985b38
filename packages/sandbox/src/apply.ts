import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
import type { ChangedFile, SandboxDiff } from './diff.js';
import { ApplyError } from './errors.js';
import { nulFields, type GitOutput, type GitRunner } from './git.js';
import { unquoteGitPath } from './git-path.js';
import { stageablePaths } from './stageable-paths.js';
import { addPaths } from './stage-paths.js';

export interface ApplyResult {
  /** True when every file applied without conflict. */
  clean: boolean;
  /** Files left with conflict markers, repo-relative. */
  conflicts: string[];
  /** Every file the patch touched (new paths of renames). */
  files: string[];
}

export interface ApplyTarget {
  /** git bound to the git dir and config the target may use (see trusted-git.ts). */
  git: GitRunner;
  /** Work tree as `git` sees it. */
  workTree: string;
  /** For messages: "the working tree at /x" or "sandbox s1". */
  label: string;
  /** Where this process sees the work tree, to leave out of staging what git cannot stage (see stageablePaths). */
  hostRoot?: string;
}

/**
 * 3-way apply through a temporary index. The index first takes the target's current content at
 * the touched paths, so edits made there meanwhile count as "ours": disjoint edits merge, and
 * overlapping ones get conflict markers. The target's real index (the user's) is never written.
 * The temporary index holds the touched paths alone: `git apply --3way` consults the index only
 * at the paths it patches, so it starts empty (no copy of a large index, nothing to drop first:
 * every touched path is hashed afresh).
 */
export async function applyPatch(ctx: SessionContext, target: ApplyTarget, diff: SandboxDiff): Promise<ApplyResult> {
  const files = diff.files.map((f) => f.path);
  if (diff.isEmpty) return { clean: true, conflicts: [], files };
  const id = randomUUID();
  const index = path.join(ctx.tmpDir, `apply-${id}.index`);
  const patchFile = path.join(ctx.tmpDir, `apply-${id}.patch`);
  try {
    await writeFile(patchFile, diff.patchBytes);
    const env = { ...ctx.objectEnv, GIT_INDEX_FILE: index };
    const base = [`--work-tree=${target.workTree}`, '-c', 'core.quotePath=false'];
    const touched = new Set(diff.files.flatMap((f) => (f.oldPath ? [f.oldPath, f.path] : [f.path])));
    const removed = new Set(diff.files.flatMap((f) => (f.oldPath ? [f.oldPath] : f.newMode === undefined ? [f.path] : [])));
    // A file the diff turns into a directory, or the other way round, has a directory in the target.
    const paths = target.hostRoot === undefined ? [...touched] : await stageablePaths(target.hostRoot, [...touched], removed);
    const applyArgs = (excludes: string[]) => [...base, 'apply', '--3way', '--whitespace=nowarn', ...excludes, patchFile];
    let out: GitOutput;
    if (!diff.files.some((f) => f.status === 'deleted' || f.status === 'renamed')) {
      // Nothing the target could already have done: staging and applying are one git run.
      const list = `${patchFile}.paths`;
      await writeFile(list, paths.map((p) => `${p}\0`).join(''));
      try {
        out = await target.git([], {
          cwd: target.workTree,
          env,
          okExitCodes: [1],
          steps: [
            // update-index, unlike add, also takes ignored files and quietly skips missing ones.
            { args: [`--work-tree=${target.workTree}`, 'update-index', '-z', '--add', '--remove', '--replace', '--stdin'], stdin: list },
            { args: applyArgs([]), okExitCodes: [1] },
          ],
        });
      } finally {
        await rm(list, { force: true });
      }
    } else {
      // update-index, unlike add, also takes ignored files and quietly skips missing ones.
      await addPaths({
        git: target.git,
        workTree: target.workTree,
        index,
        paths,
        env: ctx.objectEnv,
        cwd: target.workTree,
      });
      // A deletion or rename the target already has (the user removed the file too, or a squash
      // re-run after a crash) would fail the whole apply with "does not exist in index".
      const done = await alreadyApplied(target, base, env, diff);
      if (done.length === diff.files.length) return { clean: true, conflicts: [], files };
      const excludes = done.map((f) => `--exclude=${globEscape(f.path)}`);
      out = await target.git(applyArgs(excludes), {
        cwd: target.workTree,
        env,
        okExitCodes: [1],
      });
    }
    const conflicts = out.stderr
      .split('\n')
      .filter((l) => l.startsWith('U '))
      .map((l) => unquoteGitPath(l.slice(2)));
    if (out.exitCode !== 0 && conflicts.length === 0) throw new ApplyError(target.label, out.stderr);
    return { clean: conflicts.length === 0, conflicts, files };
  } finally {
    await rm(index, { force: true });
    await rm(`${index}.lock`, { force: true });
    await rm(patchFile, { force: true });
  }
}

/**
 * Deletions and renames whose effect the target already shows: the deleted path is gone; a
 * rename's old path is gone and its new path holds exactly the renamed content (a rename the user
 * made without the agent's edits is not "already applied": it still fails, rather than dropping
 * those edits). Reads the temporary index, which holds exactly the touched paths that exist.
 */
async function alreadyApplied(target: ApplyTarget, base: string[], env: Record<string, string>, diff: SandboxDiff): Promise<ChangedFile[]> {
  const gone = diff.files.filter((f) => f.status === 'deleted' || f.status === 'renamed');
  if (gone.length === 0) return [];
  const git = (args: string[], paths: string[]) =>
    target.git([...base, '--literal-pathspecs', ...args, '--', ...paths], { cwd: target.workTree, env });
  const asked = gone.flatMap((f) => (f.oldPath ? [f.oldPath, f.path] : [f.path]));
  // `<mode> <blob> <stage>\t<path>` per entry.
  const present = blobsByPath((await git(['ls-files', '-s', '-z'], asked)).stdout);
  const renamed = gone.filter((f) => f.status === 'renamed' && !present.has(f.oldPath ?? f.path) && present.has(f.path));
  // `<mode> <type> <blob>\t<path>` per entry, from the tree the diff leads to.
  const wanted =
    renamed.length === 0 ? new Map<string, string>() : blobsByPath((await git(['ls-tree', '-z', diff.to], renamed.map((f) => f.path))).stdout);
  return gone.filter((f) =>
    f.status === 'deleted' ? !present.has(f.path) : renamed.includes(f) && present.get(f.path) === wanted.get(f.path),
  );
}

/** Path to object id from `ls-files -s -z` or `ls-tree -z` output (the id is the field before a tab, 2nd or 3rd). */
function blobsByPath(out: Buffer): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of nulFields(out)) {
    const tab = entry.indexOf('\t');
    const meta = entry.slice(0, tab).split(' ');
    const id = meta.find((m) => /^[0-9a-f]{40,64}$/.test(m));
    if (id) map.set(entry.slice(tab + 1), id);
  }
  return map;
}

/** `git apply --exclude` takes a glob: match the path literally. */
function globEscape(p: string): string {
  return p.replace(/[\\*?[\]]/g, '\\$&');
}
