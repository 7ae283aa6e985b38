import type { OmittedFile } from './apply-policy.js';
import type { SessionContext } from './backend.js';
import { readObjects } from './blobs.js';
import { nulFields } from './git.js';
import { NO_MODE, parseRawZ } from './raw-changes.js';
import { sealedGit } from './trusted-git.js';

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type-changed';

export interface ChangedFile {
  /** Repo-relative path after the change (for deletions: the deleted path). */
  path: string;
  /** Path before a rename or copy. */
  oldPath?: string;
  status: ChangeStatus;
  binary: boolean;
  /** Git modes, e.g. '100644', '100755', '120000'; absent on the side that does not exist. */
  oldMode?: string;
  newMode?: string;
  /** Lines added/removed; undefined for binary files. */
  additions?: number;
  deletions?: number;
  /** Where the file points after the change, when it is a symlink then (newMode 120000). */
  linkTarget?: string;
}

export interface SandboxDiff {
  /** The change as a git patch (`git apply` format, binary hunks included). */
  readonly patch: string;
  /** The exact bytes of `patch`; apply these when files may not be valid UTF-8. */
  readonly patchBytes: Buffer;
  readonly files: readonly ChangedFile[];
  /**
   * Changes the sandbox made that this diff leaves out, each with its reason (see OmitRule):
   * they are in neither `patch` nor `files`, and stay at their old version wherever the diff is
   * applied. Show them to the user next to the diff.
   */
  readonly omitted: readonly OmittedFile[];
  /** Tree ids compared (`to` is the sandbox's tree with the omitted changes undone). */
  readonly from: string;
  readonly to: string;
  /** No file to apply (there may still be `omitted` ones to report). */
  readonly isEmpty: boolean;
}

const SYMLINK = '120000';

const STATUS: Record<string, ChangeStatus> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type-changed',
};

/** Plumbing diff between two trees with the session's own git dir: no diff config, external tool or textconv applies. */
export async function diffTrees(ctx: SessionContext, from: string, to: string, extra: { omitted?: readonly OmittedFile[] } = {}): Promise<SandboxDiff> {
  const git = sealedGit(ctx.plumbingGitDir);
  const opts = { cwd: ctx.tmpDir, env: { ...ctx.objectEnv } };
  const plain = ['--no-ext-diff', '--no-textconv'];
  const [patchOut, rawOut, numOut] = await Promise.all([
    git(['diff-tree', '-r', '-p', '--binary', '-M', '--no-color', ...plain, from, to], opts),
    git(['diff-tree', '-r', '-z', '-M', '--raw', ...plain, from, to], opts),
    git(['diff-tree', '-r', '-z', '-M', '--numstat', ...plain, from, to], opts),
  ]);
  const raw = parseRawZ(rawOut.stdout);
  const targets = await readObjects(ctx, raw.filter((c) => c.newMode === SYMLINK).map((c) => c.newId));
  const files = raw.map((c): ChangedFile => {
    const file: ChangedFile = { path: c.path, status: STATUS[c.letter] ?? 'modified', binary: false };
    if (c.oldPath !== undefined) file.oldPath = c.oldPath;
    if (c.oldMode !== NO_MODE) file.oldMode = c.oldMode;
    if (c.newMode !== NO_MODE) file.newMode = c.newMode;
    const target = c.newMode === SYMLINK ? targets.get(c.newId) : undefined;
    if (target !== undefined) file.linkTarget = target.toString('utf8');
    return file;
  });
  applyNumstat(files, numOut.stdout);
  const patchBytes = patchOut.stdout;
  return {
    patch: patchBytes.toString('utf8'),
    patchBytes,
    files,
    omitted: extra.omitted ?? [],
    from,
    to,
    isEmpty: files.length === 0,
  };
}

function applyNumstat(files: ChangedFile[], buf: Buffer): void {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const fields = nulFields(buf);
  for (let i = 0; i < fields.length; ) {
    const [added, deleted, p] = fields[i++].split('\t');
    let target = p;
    if (p === '') {
      i++; // rename source
      target = fields[i++];
    }
    const file = target === undefined ? undefined : byPath.get(target);
    if (!file) continue;
    if (added === '-') file.binary = true;
    else {
      file.additions = Number(added);
      file.deletions = Number(deleted);
    }
  }
}
