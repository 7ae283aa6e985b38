import type { SessionContext } from './backend.js';
import type { GitRunner } from './git.js';
import { sealedGit } from './trusted-git.js';

const NULL_ID = /^0+$/;

function batchInput(ids: Iterable<string>): string[] {
  return [...new Set(ids)].filter((id) => !NULL_ID.test(id));
}

/** Sizes in bytes of objects, read from their headers (nothing is inflated). Missing ids are absent. */
export async function objectSizes(ctx: SessionContext, ids: Iterable<string>, git: GitRunner = sealedGit(ctx.plumbingGitDir)): Promise<Map<string, number>> {
  const wanted = batchInput(ids);
  const sizes = new Map<string, number>();
  if (wanted.length === 0) return sizes;
  const out = await git(['cat-file', '--batch-check=%(objectname) %(objectsize)'], {
    cwd: ctx.tmpDir,
    env: { ...ctx.objectEnv },
    input: `${wanted.join('\n')}\n`,
  });
  for (const line of out.stdout.toString('latin1').split('\n')) {
    const [id, size] = line.split(' ');
    if (id && size && /^\d+$/.test(size)) sizes.set(id, Number(size));
  }
  return sizes;
}

/**
 * Contents of small objects (symlink targets). The caller keeps the ids to objects it knows are
 * small: everything is read into memory.
 */
export async function readObjects(ctx: SessionContext, ids: Iterable<string>, git: GitRunner = sealedGit(ctx.plumbingGitDir)): Promise<Map<string, Buffer>> {
  const wanted = batchInput(ids);
  const contents = new Map<string, Buffer>();
  if (wanted.length === 0) return contents;
  const out = (
    await git(['cat-file', '--batch'], {
      cwd: ctx.tmpDir,
      env: { ...ctx.objectEnv },
      input: `${wanted.join('\n')}\n`,
    })
  ).stdout;
  // Per object: "<id> <type> <size>\n<content>\n", or "<id> missing\n".
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at);
    if (eol === -1) break;
    const [id, , size] = out.subarray(at, eol).toString('latin1').split(' ');
    at = eol + 1;
    if (size === undefined || !/^\d+$/.test(size)) continue;
    const n = Number(size);
    contents.set(id, out.subarray(at, at + n));
    at += n + 1;
  }
  return contents;
}
