import type { SessionContext } from './backend.js';
import { sealedGit } from './trusted-git.js';

/** Git's mode for "no entry on this side". */
export const NO_MODE = '000000';

/** One entry of `diff-tree --raw -z`: a changed path with both sides' modes and object ids. */
export interface RawChange {
  /** A, M, D, R, T (C only with copy detection, which is not used). */
  letter: string;
  /** Path after the change; for deletions, the deleted path. */
  path: string;
  /** The same path as git wrote it: file names need not be UTF-8, and index edits must name the real file. */
  pathBytes: Buffer;
  /** Source of a rename. */
  oldPath?: string;
  oldPathBytes?: Buffer;
  /** NO_MODE on the side where the path does not exist. */
  oldMode: string;
  newMode: string;
  oldId: string;
  newId: string;
}

/** Every change between two trees, renames paired (`-M`), as git lists them. */
export async function rawChanges(ctx: SessionContext, from: string, to: string): Promise<RawChange[]> {
  // A sandbox that changed nothing: no git process to learn that.
  if (from === to) return [];
  // Trees of sandbox content: the session's own git dir, no config anyone else wrote.
  const out = await sealedGit(ctx.plumbingGitDir)(['diff-tree', '-r', '-z', '-M', '--raw', from, to], {
    cwd: ctx.tmpDir,
    env: { ...ctx.objectEnv },
  });
  return parseRawZ(out.stdout);
}

/** Parses `--raw -z` output without decoding paths first (see RawChange.pathBytes). */
export function parseRawZ(buf: Buffer): RawChange[] {
  const fields = splitNul(buf);
  const changes: RawChange[] = [];
  for (let i = 0; i < fields.length; ) {
    // ":<old mode> <new mode> <old id> <new id> <status>"
    const [oldMode, newMode, oldId, newId, status] = fields[i++].toString('latin1').replace(/^:/, '').split(' ');
    const letter = status.charAt(0);
    const first = fields[i++];
    const change: RawChange = {
      letter,
      path: first.toString('utf8'),
      pathBytes: first,
      oldMode: oldMode,
      newMode: newMode,
      oldId: oldId,
      newId: newId,
    };
    if (letter === 'R' || letter === 'C') {
      const second = fields[i++];
      change.oldPath = change.path;
      change.oldPathBytes = first;
      change.path = second.toString('utf8');
      change.pathBytes = second;
    }
    changes.push(change);
  }
  return changes;
}

function splitNul(buf: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let nul = buf.indexOf(0, start); nul !== -1; nul = buf.indexOf(0, start)) {
    parts.push(buf.subarray(start, nul));
    start = nul + 1;
  }
  if (start < buf.length) parts.push(buf.subarray(start));
  return parts;
}
