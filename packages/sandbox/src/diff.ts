import type { SessionContext } from './backend.js';
import { nulFields } from './git.js';
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
}

export interface SandboxDiff {
  /** The change as a git patch (`git apply` format, binary hunks included). */
  readonly patch: string;
  /** The exact bytes of `patch`; apply these when files may not be valid UTF-8. */
  readonly patchBytes: Buffer;
  readonly files: readonly ChangedFile[];
  /** Tree ids compared. */
  readonly from: string;
  readonly to: string;
  readonly isEmpty: boolean;
}

const STATUS: Record<string, ChangeStatus> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type-changed',
};

/** Plumbing diff between two trees with the session's own git dir: no diff config, external tool or textconv applies. */
export async function diffTrees(ctx: SessionContext, from: string, to: string): Promise<SandboxDiff> {
  const git = sealedGit(ctx.plumbingGitDir);
  const opts = { cwd: ctx.tmpDir, env: { ...ctx.objectEnv } };
  const plain = ['--no-ext-diff', '--no-textconv'];
  const [patchOut, rawOut, numOut] = await Promise.all([
    git(['diff-tree', '-r', '-p', '--binary', '-M', '--no-color', ...plain, from, to], opts),
    git(['diff-tree', '-r', '-z', '-M', '--raw', ...plain, from, to], opts),
    git(['diff-tree', '-r', '-z', '-M', '--numstat', ...plain, from, to], opts),
  ]);
  const files = parseRaw(rawOut.stdout);
  applyNumstat(files, numOut.stdout);
  const patchBytes = patchOut.stdout;
  return {
    patch: patchBytes.toString('utf8'),
    patchBytes,
    files,
    from,
    to,
    isEmpty: files.length === 0,
  };
}

function parseRaw(buf: Buffer): ChangedFile[] {
  const fields = nulFields(buf);
  const files: ChangedFile[] = [];
  for (let i = 0; i < fields.length; ) {
    const meta = fields[i++]!;
    const [oldMode, newMode, , , statusField] = meta.replace(/^:/, '').split(' ');
    const letter = statusField!.charAt(0);
    const status = STATUS[letter] ?? 'modified';
    const first = fields[i++]!;
    const file: ChangedFile = { path: first, status, binary: false };
    if (letter === 'R' || letter === 'C') {
      file.oldPath = first;
      file.path = fields[i++]!;
    }
    if (oldMode !== '000000') file.oldMode = oldMode;
    if (newMode !== '000000') file.newMode = newMode;
    files.push(file);
  }
  return files;
}

function applyNumstat(files: ChangedFile[], buf: Buffer): void {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const fields = nulFields(buf);
  for (let i = 0; i < fields.length; ) {
    const [added, deleted, p] = fields[i++]!.split('\t');
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
