// Project instruction files (AGENTS.md, CLAUDE.md, CLAUDE.local.md) and the files they import
// with `@path`. Read the same way for the system prompt (the CLI, from the user's working tree,
// synchronously: before the TUI's first frame) and for subdirectories (the tools, through a
// thread's sandbox, asynchronously): one walk, written as a generator that asks for each file it
// needs, driven by a synchronous or an asynchronous reader. Dependency-free but for node:fs, so
// the CLI loads it (`@infinity-code/tools/instruction-files`) without the tools themselves.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';

export const INSTRUCTION_LIMITS = {
  /** Imports of imports are followed this many levels below the instruction file, no deeper. */
  maxDepth: 5,
  /**
   * Characters one delivery holds (the system prompt's instructions, or those shown with one tool
   * result), imports included; what comes after is left out, with a note saying what.
   */
  maxChars: 40_000,
  /** Files one delivery tries to read (imports found or not), so a file of many `@` words stays cheap. */
  maxReads: 100,
} as const;

/** Of a bigger file only this much is read: it is over maxChars whatever its characters. */
const MAX_READ_BYTES = INSTRUCTION_LIMITS.maxChars * 4;

/** The instruction files a directory may hold, in the order they are shown (see instructionNames). */
export const INSTRUCTION_FILE_NAMES = ['AGENTS.md', 'CLAUDE.md', 'CLAUDE.local.md'] as const;

/** The user's own notes (usually git-ignored, so never in a sandbox): see NestedInstructions. */
export const LOCAL_INSTRUCTIONS = 'CLAUDE.local.md';

export interface InstructionFile {
  /** Repo-relative path. */
  file: string;
  /** Its text, then the files it imports (see importedBlock), or a note when it was left out. */
  text: string;
}

/** One file the walk needs: `path` (repo-relative), read for the instruction file `top`. */
export interface ReadRequest {
  path: string;
  top: string;
}

/** A file's text, or undefined when it is missing or may not be read (then it is not imported). */
export type SyncReader = (request: ReadRequest) => string | undefined;
export type Reader = (request: ReadRequest) => Promise<string | undefined>;

export interface WalkOptions {
  /** The repository's absolute path: `@/abs/path` imports under it are read, other absolute ones are not. */
  root?: string | undefined;
  /** Paths taken as shown already: present, but neither shown nor imported again (the file a tool call just read). */
  shown?: Iterable<string>;
  maxChars?: number;
}

type Walk<T> = Generator<ReadRequest, T, string | undefined>;

interface WalkState {
  root: string | undefined;
  /** Files included (or taken as shown): each at most once, which also ends import cycles. */
  seen: Set<string>;
  left: number;
  max: number;
  reads: number;
}

/**
 * The instruction files of `dirs` (repo-relative, '' for the root), in that order, each with what
 * it imports: per directory AGENTS.md, or CLAUDE.md when there is none (Codex reads AGENTS.md,
 * Claude Code CLAUDE.md; a project that has both mostly has one say what the other says, or be a
 * link to it), then CLAUDE.local.md, the user's own notes. Empty files are left out.
 */
export function readInstructionsSync(dirs: readonly string[], read: SyncReader, o: WalkOptions = {}): InstructionFile[] {
  const walk = walkDirs(dirs, o);
  let step = walk.next();
  while (!step.done) step = walk.next(read(step.value));
  return step.value;
}

/** readInstructionsSync with an asynchronous reader (a sandbox's). */
export async function readInstructions(dirs: readonly string[], read: Reader, o: WalkOptions = {}): Promise<InstructionFile[]> {
  const walk = walkDirs(dirs, o);
  let step = walk.next();
  while (!step.done) step = walk.next(await read(step.value));
  return step.value;
}

function* walkDirs(dirs: readonly string[], o: WalkOptions): Walk<InstructionFile[]> {
  const max = o.maxChars ?? INSTRUCTION_LIMITS.maxChars;
  const state: WalkState = { root: o.root, seen: new Set(o.shown), left: max, max, reads: 0 };
  const out: InstructionFile[] = [];
  for (const dir of dirs) {
    const [agents, claude, local] = INSTRUCTION_FILE_NAMES.map((name) => (dir === '' ? name : `${dir}/${name}`));
    if (!(yield* topFile(agents, state, out))) yield* topFile(claude, state, out);
    yield* topFile(local, state, out);
  }
  return out;
}

/** Reads one instruction file into `out`; true when it exists (shown, left out, or shown already). */
function* topFile(file: string, state: WalkState, out: InstructionFile[]): Walk<boolean> {
  if (state.seen.has(file)) return true;
  const text = yield { path: file, top: file };
  if (text === undefined) return false;
  state.seen.add(file);
  if (state.left <= 0) {
    out.push({ file, text: leftOutNote(file, state.max) });
    return true;
  }
  const expanded = yield* expand(file, clean(text), 0, file, state);
  if (expanded !== '') out.push({ file, text: expanded });
  return true;
}

/**
 * `text` (of `file`, `depth` imports below the instruction file) within the budget, then what it
 * imports, each once, depth first. Imports at maxDepth are read, their own imports not.
 */
function* expand(file: string, text: string, depth: number, top: string, state: WalkState): Walk<string> {
  const own = take(text, file, state);
  const parts = [own];
  if (depth >= INSTRUCTION_LIMITS.maxDepth) return own;
  // Only what was kept is looked at: an import in the part cut off is not read.
  for (const raw of importsOf(own)) {
    if (state.left <= 0) break;
    for (const candidate of candidates(raw)) {
      const rel = resolveImport(file, candidate, state.root);
      if (rel === undefined) continue;
      if (state.seen.has(rel)) break;
      if (state.reads >= INSTRUCTION_LIMITS.maxReads) return parts.join('\n\n');
      state.reads++;
      const imported = yield { path: rel, top };
      if (imported === undefined) continue;
      state.seen.add(rel);
      const body = yield* expand(rel, clean(imported), depth + 1, top, state);
      parts.push(importedBlock(rel, body));
      break;
    }
  }
  return parts.join('\n\n');
}

/** How an imported file follows the file that imports it. */
export function importedBlock(file: string, text: string): string {
  return `<imported file="${file}">\n${text}\n</imported>`;
}

function clean(text: string): string {
  return text.replace(/^\uFEFF/, '').trim();
}

/** `text` as far as the budget goes: cut (at a line end when one is near) with a note past it. */
function take(text: string, file: string, state: WalkState): string {
  if (text.length <= state.left) {
    state.left -= text.length;
    return text;
  }
  let end = state.left;
  const lineEnd = text.lastIndexOf('\n', end);
  if (lineEnd > end / 2) end = lineEnd;
  // Not between the halves of a surrogate pair.
  if (end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
  state.left = 0;
  const note =
    `[Cut here: instructions are limited to ${state.max} characters. The rest of ${file} and anything after it ` +
    'were left out; read them with read_file when they matter.]';
  return `${text.slice(0, end).trimEnd()}\n\n${note}`;
}

function leftOutNote(file: string, max: number): string {
  return `[Left out: instructions are limited to ${max} characters. Read ${file} with read_file when it matters.]`;
}

/**
 * The `@path` imports of a Markdown text, in order: an `@` at the start of a line or after white
 * space, up to the next white space. Not inside code: fenced blocks (``` or ~~~) and code spans
 * (`...`) are skipped, so `@decorator` in an example is left alone.
 */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  let fence: { ch: string; len: number } | undefined;
  for (const line of text.split('\n')) {
    const marker = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (marker && marker[1][0] === fence.ch && marker[1].length >= fence.len && marker[2].trim() === '') fence = undefined;
      continue;
    }
    // A backtick fence's info string has no backtick: otherwise the line is a code span.
    if (marker && !(marker[1][0] === '`' && marker[2].includes('`'))) {
      fence = { ch: marker[1][0], len: marker[1].length };
      continue;
    }
    for (const m of withoutCodeSpans(line).matchAll(/(?:^|\s)@(\S+)/g)) out.push(m[1]);
  }
  return out;
}

/** The line with each code span (a run of n backticks to the next run of exactly n) replaced by NUL. */
function withoutCodeSpans(line: string): string {
  let out = '';
  let i = 0;
  while (i < line.length) {
    if (line[i] !== '`') {
      out += line[i];
      i++;
      continue;
    }
    let j = i;
    while (line[j] === '`') j++;
    const n = j - i;
    let close = -1;
    for (let k = j; k < line.length; ) {
      if (line[k] !== '`') {
        k++;
        continue;
      }
      let e = k;
      while (line[e] === '`') e++;
      if (e - k === n) {
        close = e;
        break;
      }
      k = e;
    }
    if (close < 0) {
      // No closing run: the backticks are text.
      out += line.slice(i, j);
      i = j;
    } else {
      out += '\0';
      i = close;
    }
  }
  return out;
}

/** The path as written, then without the punctuation a sentence may put after it ("see @a.md."). */
function candidates(raw: string): string[] {
  const bare = raw.replace(/[.,;:!?)\]}>'"`]+$/, '');
  return bare !== raw && bare !== '' ? [raw, bare] : [raw];
}

/**
 * The repo-relative path an import names, relative to the importing file; undefined for what is
 * never read: anything outside the repository (`..` past the root, absolute paths elsewhere), and
 * `.git` and `.infinity` (git's config may hold credentials of remotes, `.infinity` the sessions).
 *
 * `@~/...` (the home directory) is never read, unlike in Claude Code. Instruction files come with
 * the repository, which anyone may have written (a cloned project, a pull request under review):
 * `@~/.aws/credentials` or `@~/.ssh/id_ed25519` in one would put the user's secrets into the
 * prompt sent to the model, while the sandbox keeps the home from the agent's tools and commands
 * for that very reason. Only what the repository holds is read.
 */
export function resolveImport(from: string, raw: string, root?: string): string | undefined {
  if (raw.startsWith('~') || raw.includes('\0')) return undefined;
  let rel: string;
  if (path.posix.isAbsolute(raw)) {
    if (root === undefined) return undefined;
    rel = path.posix.relative(root, path.posix.normalize(raw));
    if (path.posix.isAbsolute(rel)) return undefined;
  } else {
    rel = path.posix.join(path.posix.dirname(from), raw);
  }
  rel = path.posix.normalize(rel);
  if (rel === '.' || rel === '..' || rel.startsWith('../')) return undefined;
  return isPrivate(rel) ? undefined : rel.replace(/\/+$/, '');
}

/** `.git` (any repository's, nested ones too) and `.infinity`: never imported. */
function isPrivate(rel: string): boolean {
  const parts = rel.split('/');
  return parts[0] === '.infinity' || parts.includes('.git');
}

/**
 * Decides whether a file of the working tree may be read for `request`, by its real path
 * (repo-relative, links resolved): see the CLI's rule on git-ignored files.
 */
export type HostAllow = (realRel: string, request: ReadRequest) => boolean;

/**
 * Reads files of the repository at `root` (the user's working tree): regular files only, none
 * whose real path leaves the repository (a symbolic link to elsewhere is not followed out), and
 * only those `allow` allows.
 */
export function hostReaderSync(root: string, allow?: HostAllow): SyncReader {
  let realRoot: string | undefined;
  return (request) => {
    try {
      realRoot ??= realpathSync(root);
      const real = realpathSync(path.join(realRoot, request.path));
      const realRel = repoRelative(realRoot, real);
      if (realRel === undefined || (allow && !allow(realRel, request))) return undefined;
      // Non-blocking: a FIFO opens at once (and is then refused as not a regular file).
      const fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        const st = fstatSync(fd);
        if (!st.isFile()) return undefined;
        const buf = Buffer.alloc(Math.min(st.size, MAX_READ_BYTES));
        let got = 0;
        while (got < buf.length) {
          const n = readSync(fd, buf, got, buf.length - got, got);
          if (n === 0) break;
          got += n;
        }
        return buf.subarray(0, got).toString('utf8');
      } finally {
        closeSync(fd);
      }
    } catch {
      return undefined;
    }
  };
}

/** hostReaderSync, asynchronous. */
export function hostReader(root: string, allow?: HostAllow): Reader {
  let realRoot: Promise<string> | undefined;
  return async (request) => {
    try {
      realRoot ??= realpath(root);
      const base = await realRoot;
      const real = await realpath(path.join(base, request.path));
      const realRel = repoRelative(base, real);
      if (realRel === undefined || (allow && !allow(realRel, request))) return undefined;
      const fh = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        const st = await fh.stat();
        if (!st.isFile()) return undefined;
        const buf = Buffer.alloc(Math.min(st.size, MAX_READ_BYTES));
        let got = 0;
        while (got < buf.length) {
          const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return buf.subarray(0, got).toString('utf8');
      } finally {
        await fh.close();
      }
    } catch {
      return undefined;
    }
  };
}

/** `real` relative to the repository, when it is inside and not private (see isPrivate). */
function repoRelative(realRoot: string, real: string): string | undefined {
  const rel = path.relative(realRoot, real);
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  const posix = rel.split(path.sep).join('/');
  return isPrivate(posix) ? undefined : posix;
}

/** Cuts a read to what a delivery could hold (a sandbox reads whole files). */
export function clipRead(text: string): string {
  return text.length > MAX_READ_BYTES ? text.slice(0, MAX_READ_BYTES) : text;
}
