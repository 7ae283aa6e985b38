// `@path` in a message: the file's content goes with it to the model (a directory's listing),
// bounded in size. Pure: what a path holds comes from the caller (prompt-workspace.ts reads the
// user's working tree).

/** An `@path` (or `@"path with spaces"`) in a message. */
export interface Mention {
  /** As typed, without the `@` and quotes. */
  path: string;
  /** Where the `@` is, and just past the mention. */
  start: number;
  end: number;
}

/** What a mentioned path holds. */
export type MentionTarget =
  /** `head`: the first bytes (the reader stops at its limit); `size`: the whole file's. */
  | { kind: 'file'; head: Uint8Array; size: number }
  /** `entries`: its repository files and folders (folders end in `/`), one level. */
  | { kind: 'directory'; entries: string[] }
  | { kind: 'missing' }
  /** A path (or symlink) leading out of the repository. */
  | { kind: 'outside' }
  | { kind: 'unreadable'; reason: string };

export interface AttachLimits {
  /** Most bytes of one file sent. */
  fileBytes: number;
  /** Most bytes of all attachments of one message. */
  totalBytes: number;
  /** Most entries of a directory listed. */
  directoryEntries: number;
}

export const ATTACH_LIMITS: AttachLimits = { fileBytes: 100_000, totalBytes: 300_000, directoryEntries: 200 };

export interface Attachment {
  /** Repository-relative; a directory's ends in `/`. */
  path: string;
  kind: 'file' | 'directory';
  /** Lines of a file sent, entries of a directory. */
  count: number;
  /** Part of it was left out (the file is larger than the limits, or the listing longer). */
  truncated: boolean;
}

export interface AttachResult {
  /** The typed text with a block per attachment after it: what the model is sent. */
  message: string;
  attached: Attachment[];
  /** Mentions that attached nothing, with why: for the user. */
  skipped: Array<{ path: string; reason: string }>;
}

/** Mentions start a word: `a@b.c` is no mention. */
const MENTION = /(?<=^|\s)@(?:"([^"\n]+)"|([^\s"]+))/g;

export function findMentions(text: string): Mention[] {
  return [...text.matchAll(MENTION)].map((m) => ({ path: m[1] ?? m[2], start: m.index, end: m.index + m[0].length }));
}

/**
 * `text` with what its mentions name attached, each once, in order; a binary file, a path that
 * isn't there, or one outside the repository attaches nothing and stays as typed.
 */
export function attachMentions(
  text: string,
  read: (path: string) => MentionTarget,
  limits: AttachLimits = ATTACH_LIMITS,
  base = '',
): AttachResult {
  const blocks: string[] = [];
  const attached: Attachment[] = [];
  const skipped: AttachResult['skipped'] = [];
  const seen = new Set<string>();
  let budget = limits.totalBytes;
  for (const mention of findMentions(text)) {
    const found = resolve(mention.path, read, base);
    if (!found) continue;
    const { path, target } = found;
    if (seen.has(path)) continue;
    seen.add(path);
    switch (target.kind) {
      case 'missing':
        // "@alice" is a name and "@app.route('/')" code, not paths; "@src/mian.ts" is a typo the user should hear of.
        if (/[/.]/.test(path) && /^[\w./-]+$/.test(path)) skipped.push({ path, reason: 'no such file or directory' });
        break;
      case 'outside':
        skipped.push({ path, reason: 'outside the repository' });
        break;
      case 'unreadable':
        skipped.push({ path, reason: target.reason });
        break;
      case 'directory': {
        const dir = path.endsWith('/') ? path : `${path}/`;
        if (target.entries.length === 0) {
          skipped.push({ path: dir, reason: 'no repository files in it' });
          break;
        }
        const shown = target.entries.slice(0, limits.directoryEntries);
        const more = target.entries.length - shown.length;
        const listing = [...shown, ...(more > 0 ? [`[… ${more} more entries not listed]`] : [])].join('\n');
        blocks.push(block('directory', dir, listing));
        attached.push({ path: dir, kind: 'directory', count: shown.length, truncated: more > 0 });
        break;
      }
      case 'file': {
        if (looksBinary(target.head)) {
          skipped.push({ path, reason: `a binary file (${sizeText(target.size)})` });
          break;
        }
        const room = Math.min(limits.fileBytes, budget);
        if (room <= 0) {
          skipped.push({ path, reason: `the message's attachments reached their limit (${sizeText(limits.totalBytes)})` });
          break;
        }
        const { content, bytes } = headText(target.head, room, target.size);
        const truncated = bytes < target.size;
        budget -= bytes;
        const note = truncated ? `\n[… truncated: the first ${sizeText(bytes)} of ${sizeText(target.size)} are shown; read_file reads the rest]` : '';
        blocks.push(block('file', path, `${content}${note}`));
        attached.push({ path, kind: 'file', count: lineCount(content), truncated });
        break;
      }
    }
  }
  const message = blocks.length === 0 ? text : `${text}\n\n${blocks.join('\n\n')}`;
  return { message, attached, skipped };
}

/** One dim line per attachment or skipped mention, for the transcript and stderr. */
export function attachmentNotes(r: Pick<AttachResult, 'attached' | 'skipped'>): string[] {
  return [
    ...r.attached.map((a) => {
      const what = a.kind === 'file' ? `${a.count} ${a.count === 1 ? 'line' : 'lines'}` : `${a.count} ${a.count === 1 ? 'entry' : 'entries'}`;
      return `attached ${a.path} (${what}${a.truncated ? ', truncated' : ''})`;
    }),
    ...r.skipped.map((s) => `not attached: ${s.path} (${s.reason})`),
  ];
}

/**
 * One attachment. Its line count lets a reader find where it ends whatever it holds (a file may
 * hold text that looks like a block).
 */
function block(kind: 'file' | 'directory', path: string, body: string): string {
  return `<attached-${kind} path="${path}" lines="${body.split('\n').length}">\n${body}\n</attached-${kind}>`;
}

/**
 * A sent message read back (a resumed session's transcript): the text as typed, and the paths
 * its attachment blocks carry, which the transcript names instead of showing.
 */
export function splitAttachments(message: string): { typed: string; attached: string[] } {
  const first = message.search(/\n\n<attached-(file|directory) path="[^"\n]*" lines="\d+">\n/);
  if (first === -1) return { typed: message, attached: [] };
  const attached: string[] = [];
  // Sticky: each block must start where the one before ended.
  const blockHead = /\n\n<attached-(file|directory) path="([^"\n]*)" lines="(\d+)">\n/y;
  let at = first;
  for (;;) {
    blockHead.lastIndex = at;
    const head = blockHead.exec(message);
    if (!head) break;
    let end = at + head[0].length;
    for (let n = Number(head[3]); n > 0 && end > 0; n--) end = message.indexOf('\n', end) + 1;
    const foot = `</attached-${head[1]}>`;
    if (end === 0 || !message.startsWith(foot, end)) break;
    attached.push(head[2]);
    at = end + foot.length;
  }
  return { typed: message.slice(0, first), attached };
}

/**
 * The path a mention names: as typed, else without trailing punctuation ("see @a.ts." names
 * `a.ts`); undefined for a path that can't name a repository file (absolute, or leaving it).
 * `base`: the repository-relative directory the user works in. A path is read from there first,
 * as a shell reads it, then from the repository's root.
 */
function resolve(typed: string, read: (path: string) => MentionTarget, base = ''): { path: string; target: MentionTarget } | undefined {
  let tried: { path: string; target: MentionTarget } | undefined;
  for (let candidate = typed; candidate !== ''; candidate = candidate.slice(0, -1)) {
    const paths = (base === '' ? [candidate] : [`${base}/${candidate}`, candidate]).map(normalise);
    if (paths.every((p) => p === undefined)) return tried ?? { path: candidate, target: { kind: 'outside' } };
    let missing: { path: string; target: MentionTarget } | undefined;
    for (const path of paths) {
      if (path === undefined) continue;
      // `@.` is the whole repository (from its root): nothing to attach.
      if (path === '') return tried;
      const target = read(path);
      if (target.kind !== 'missing') return { path, target };
      // The path as the user meant it (from where they are) is the one said to be missing.
      missing ??= { path, target };
    }
    tried = missing;
    if (!/[.,;:!?)\]}'"`]$/.test(candidate)) return tried;
  }
  return tried;
}

/**
 * `./src//a.ts` → `src/a.ts`, `.` → `` (the root); undefined for absolute paths and ones climbing
 * out with `..`.
 */
export function normalise(path: string): string | undefined {
  if (path.startsWith('/') || path.startsWith('~')) return undefined;
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  const joined = out.join('/');
  return path.endsWith('/') && joined !== '' ? `${joined}/` : joined;
}

/** git's test: a NUL byte in the first 8000 bytes. */
function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, 8000).includes(0);
}

/** At most `room` bytes of the file as text, cut at a line end when it must be cut. */
function headText(head: Uint8Array, room: number, size: number): { content: string; bytes: number } {
  if (head.length <= room && head.length >= size) return { content: trimEnd(new TextDecoder().decode(head)), bytes: head.length };
  let cut = Math.min(room, head.length);
  const lastNewline = head.subarray(0, cut).lastIndexOf(10);
  // A cut mid-line only for a file with one enormous line.
  if (lastNewline > 0) cut = lastNewline + 1;
  return { content: trimEnd(new TextDecoder().decode(head.subarray(0, cut))), bytes: cut };
}

function trimEnd(s: string): string {
  return s.replace(/\n+$/, '');
}

function lineCount(s: string): number {
  return s === '' ? 0 : s.split('\n').length;
}

function sizeText(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${Math.round(bytes / 1000)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
