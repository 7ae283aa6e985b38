import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import type { ApplyResult } from './apply.js';
import type { SessionContext } from './backend.js';
import { readObjects } from './blobs.js';
import { wholeChanges, type SandboxDiff } from './diff.js';
import { NO_MODE, type RawChange } from './raw-changes.js';
import { SandboxError } from './errors.js';
import { hasOddBytes } from './utf8-names.js';
import type { FileStat, ViewFs } from './view-fs.js';

// At most this many files, of at most this many bytes together, are written directly; a bigger
// change goes through git, whose own cost then dominates anyway.
const MAX_FILES = 256;
const MAX_BYTES = 8 * 1024 * 1024;
const PLAIN_FILE = new Set(['100644', '100755']);

/**
 * applyPatch without git, for the common case of a child's report: every file the diff touches
 * is, in the target, exactly what the diff starts from (a file the target has not changed since
 * the spawn, or a new path it does not have). Then a 3-way apply can only write each file's new
 * version, and that is what this does, through the target's view (ViewFs: no write leaves the
 * sandbox). Undefined, with nothing written, whenever that is not certain: renames, deletions,
 * links, mode changes, a target that changed a file too, anything that makes git convert content
 * (attributes, line-ending settings), or a diff that is not a whole one (a review's selection of
 * hunks, whose `to` tree holds more than its patch). The caller then applies with git.
 */
export async function applyDirect(ctx: SessionContext, fs: ViewFs, diff: SandboxDiff): Promise<ApplyResult | undefined> {
  const changes = wholeChanges(diff);
  if (changes === undefined || changes.length === 0 || changes.length > MAX_FILES) return undefined;
  if (!changes.every(isPlainEdit)) return undefined;
  if (await convertsContent(ctx)) return undefined;
  if (await hasAttributes(fs, changes)) return undefined;
  for (const c of changes) if (!(await holdsPreimage(fs, c))) return undefined;
  const contents = await postimages(ctx, changes);
  if (contents === undefined) return undefined;
  for (const c of changes) {
    // A new file gets git's modes; an edited one keeps the target's (the mode did not change).
    await fs.writeFile(c.path, contents.get(c.newId)!, c.letter === 'A' ? { mode: c.newMode === '100755' ? 0o755 : 0o644 } : {});
  }
  return { clean: true, conflicts: [], files: diff.files.map((f) => f.path) };
}

/**
 * An added or edited regular file, its mode unchanged, named in UTF-8 (the view is asked by the
 * decoded name, which for other bytes is not the file's); no `.gitattributes` among them.
 */
function isPlainEdit(c: RawChange): boolean {
  if (hasOddBytes(c.path)) return false;
  if (path.posix.basename(c.path) === '.gitattributes') return false;
  if (c.letter === 'A') return c.oldMode === NO_MODE && PLAIN_FILE.has(c.newMode);
  return c.letter === 'M' && c.oldMode === c.newMode && PLAIN_FILE.has(c.newMode);
}

/**
 * True when the session's git may convert content between a blob and a file: line-ending
 * settings copied from the user's config, or a case-insensitive name lookup. Read once per session.
 */
function convertsContent(ctx: SessionContext): Promise<boolean> {
  let known = settingsRead.get(ctx);
  if (known === undefined) {
    known = readFile(path.join(ctx.plumbingGitDir, 'config'), 'utf8').then(
      (config) => /^\s*(eol\s*=|autocrlf\s*=\s*"?(true|input)|ignorecase\s*=\s*"?true)/im.test(config),
      () => true,
    );
    settingsRead.set(ctx, known);
  }
  return known;
}

const settingsRead = new WeakMap<SessionContext, Promise<boolean>>();

/** A `.gitattributes` in the target at the root or in any directory holding a touched path. */
async function hasAttributes(fs: ViewFs, changes: readonly RawChange[]): Promise<boolean> {
  const dirs = new Set<string>(['']);
  for (const c of changes) {
    for (let d = path.posix.dirname(c.path); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
  }
  for (const d of dirs) {
    if (await fs.exists(d === '' ? '.gitattributes' : `${d}/.gitattributes`)) return true;
  }
  return false;
}

/** The target holds what the change starts from: nothing at a new path, the old blob at an edited one. */
async function holdsPreimage(fs: ViewFs, c: RawChange): Promise<boolean> {
  let st: FileStat | undefined;
  try {
    st = await fs.stat(c.path);
  } catch (err) {
    // Only a path that is not there is known; anything else is git's to explain.
    if (!(err instanceof SandboxError && err.code === 'not-found')) return false;
  }
  if (c.letter === 'A') return st === undefined;
  if (st?.type !== 'file' || st.size > MAX_BYTES) return false;
  if ((st.mode & 0o100) !== 0 !== (c.oldMode === '100755')) return false;
  const content = await fs.readFile(c.path).catch(() => undefined);
  return content !== undefined && blobId(content, c.oldId) === c.oldId;
}

/**
 * The new contents by id, each checked against its id: loose objects in the session's store are
 * read here (the trees of a diff were just hashed there), any other through git. Undefined when
 * one is missing or they are too big together.
 */
async function postimages(ctx: SessionContext, changes: readonly RawChange[]): Promise<Map<string, Buffer> | undefined> {
  const contents = new Map<string, Buffer>();
  const missing: string[] = [];
  for (const { newId } of changes) {
    if (contents.has(newId)) continue;
    const loose = await looseBlob(ctx.objectsDir, newId);
    if (loose === undefined) missing.push(newId);
    else contents.set(newId, loose);
  }
  if (missing.length > 0) {
    const read = await readObjects(ctx, missing).catch(() => new Map<string, Buffer>());
    for (const id of missing) {
      const content = read.get(id);
      if (content === undefined || blobId(content, id) !== id) return undefined;
      contents.set(id, content);
    }
  }
  let bytes = 0;
  for (const c of contents.values()) bytes += c.length;
  return bytes <= MAX_BYTES ? contents : undefined;
}

async function looseBlob(objectsDir: string, id: string): Promise<Buffer | undefined> {
  const stored = await readFile(path.join(objectsDir, id.slice(0, 2), id.slice(2))).catch(() => undefined);
  if (stored === undefined) return undefined;
  let raw: Buffer;
  try {
    raw = inflateSync(stored);
  } catch {
    return undefined;
  }
  const nul = raw.indexOf(0);
  const header = nul < 0 ? '' : raw.subarray(0, nul).toString('latin1');
  if (!/^blob \d+$/.test(header) || Number(header.slice(5)) !== raw.length - nul - 1) return undefined;
  const content = raw.subarray(nul + 1);
  return blobId(content, id) === id ? content : undefined;
}

/** Git's id of `content` as a blob, in the object format `like` is written in (SHA-1 or SHA-256). */
function blobId(content: Buffer, like: string): string {
  return createHash(like.length === 64 ? 'sha256' : 'sha1')
    .update(`blob ${content.length}\0`)
    .update(content)
    .digest('hex');
}
