import type { AsyncTool, ResultContent, ToolContext, ToolDisplay, ToolOutput } from '@infinity-code/runtime';
import type { Sandbox } from '@infinity-code/sandbox';
import { addedDirPath, requireConfinedView, statAddedPath } from './added-dirs.js';
import { classify } from './content-kind.js';
import { ToolError } from './errors.js';
import { guardPath } from './path-guard.js';
import { contentHash, readMemoryOf, type ReadMemory } from './read-memory.js';
import { clipLine, numbered, plural, splitLines } from './text-lines.js';
import { optInt, sandboxTool, short, shown, str, type ToolEnv } from './tool-kit.js';

export const READ_LIMITS = {
  /** Lines shown by one call; the note says how to read on. */
  maxLines: 2_000,
  /** Characters shown by one call (long lines fill it before maxLines does). */
  maxChars: 100_000,
  maxLineChars: 2_000,
  /** Bigger files are not loaded at all: the sandbox reads whole files. */
  maxFileBytes: 32 * 1024 * 1024,
  /** The model API's limit for one image. */
  maxImageBytes: 5 * 1024 * 1024,
} as const;

export function readFileTool(env: ToolEnv): AsyncTool {
  const memory = readMemoryOf(env);
  return sandboxTool(env, {
    name: 'read_file',
    description:
      'Read a file of the repository (path relative to its root). Text comes back numbered like `cat -n` ' +
      '(number, tab, line); PNG, JPEG, GIF and WebP images come back as images. At most ' +
      `${READ_LIMITS.maxLines} lines per call: read a part with start_line and end_line (1-based, inclusive) ` +
      'or offset and limit. An unchanged re-read only says so.',
    access: 'read',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the repository root.' },
        start_line: { type: 'integer', minimum: 1, description: 'First line to show (1-based).' },
        end_line: { type: 'integer', minimum: 1, description: 'Last line to show (inclusive).' },
        offset: { type: 'integer', minimum: 0, description: 'Line to start from (like start_line).' },
        limit: { type: 'integer', minimum: 1, description: 'Number of lines to show.' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    display(input) {
      const s = input.start_line ?? (input.offset === 0 ? 1 : input.offset);
      const e = input.end_line ?? (typeof input.limit === 'number' ? (typeof s === 'number' ? s : 1) + input.limit - 1 : undefined);
      const range = s === undefined && e === undefined ? '' : `:${s === undefined ? '1' : shown(s)}-${e === undefined ? '' : shown(e)}`;
      return `Read ${short(input.path)}${range}`;
    },
    run: (input, sb, ctx) => readFile(sb, env, memory, input, ctx),
  });
}

/**
 * The file a path argument names: the repository's (through the sandbox), or one in a directory
 * added with --add-dir (an absolute path; read in the confined view, see added-dirs.ts).
 */
async function fileAt(
  sb: Sandbox,
  env: ToolEnv,
  raw: string,
): Promise<{ rel: string; st: { type: string; size: number }; read: () => Promise<Buffer> }> {
  const added = addedDirPath(raw, env.readDirs ?? [], [sb.root, ...(env.repoRoot ? [env.repoRoot] : [])]);
  if (added === undefined) {
    const rel = await guardPath(sb, raw, { repoRoot: env.repoRoot });
    return { rel, st: await sb.stat(rel), read: () => sb.readFile(rel) };
  }
  requireConfinedView(sb, raw);
  const entry = await statAddedPath(sb, added, READ_LIMITS.maxFileBytes);
  if (entry.type === 'dir') return { rel: added, st: { type: 'dir', size: 0 }, read: () => Promise.resolve(Buffer.alloc(0)) };
  return { rel: added, st: { type: 'file', size: entry.size }, read: () => Promise.resolve(entry.bytes ?? Buffer.alloc(0)) };
}

/** The lines asked for: start_line/end_line, or offset/limit (Claude Code's names), never both kinds. */
function requestedRange(input: Record<string, unknown>): { start?: number; end?: number; startName: string } {
  const startLine = optInt(input, 'start_line');
  const endLine = optInt(input, 'end_line');
  const offset = optInt(input, 'offset');
  const limit = optInt(input, 'limit');
  if (startLine !== undefined && offset !== undefined) throw new ToolError('Give start_line or offset, not both (they mean the same).');
  if (endLine !== undefined && limit !== undefined) throw new ToolError('Give end_line or limit, not both.');
  // offset 0 is the start of the file too.
  const start = startLine ?? (offset === undefined ? undefined : Math.max(offset, 1));
  const end = endLine ?? (limit === undefined ? undefined : (start ?? 1) + limit - 1);
  if (start !== undefined && end !== undefined && end < start) {
    throw new ToolError(`end_line (${end}) is before start_line (${start}). Give a range with start_line <= end_line.`);
  }
  return { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }), startName: offset !== undefined ? 'offset' : 'start_line' };
}

async function readFile(
  sb: Sandbox,
  env: ToolEnv,
  memory: ReadMemory,
  input: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolOutput> {
  const raw = str(input, 'path');
  const { start, end, startName } = requestedRange(input);
  const { rel, st, read } = await fileAt(sb, env, raw);
  if (st.type === 'dir') throw new ToolError(`"${rel}" is a directory, not a file. Use list_files to see what it contains.`);
  if (st.size > READ_LIMITS.maxFileBytes) {
    throw new ToolError(
      `"${rel}" is too big to read (${st.size} bytes; the limit is ${READ_LIMITS.maxFileBytes}). Use grep to find ` +
        `what you need in it, or execute_command with e.g. \`sed -n '100,200p' ${rel}\` for a range of lines.`,
    );
  }
  const bytes = await read();
  const content = classify(bytes);
  if (content.kind === 'image') {
    if (bytes.length > READ_LIMITS.maxImageBytes) {
      throw new ToolError(`"${rel}" is an image of ${bytes.length} bytes; images over ${READ_LIMITS.maxImageBytes} bytes cannot be shown.`);
    }
    const blocks: ResultContent[] = [
      { type: 'text', text: `Image ${rel} (${content.mediaType}, ${bytes.length} bytes):` },
      { type: 'image', source: { type: 'base64', media_type: content.mediaType, data: bytes.toString('base64') } },
    ];
    return { content: blocks, display: { title: `Read ${rel}`, summary: `image, ${content.mediaType}, ${plural(bytes.length, 'byte')}` } };
  }
  if (content.kind === 'binary') {
    throw new ToolError(
      `"${rel}" is a binary file (${bytes.length} bytes; ${content.why}). read_file shows text files and ` +
        `PNG, JPEG, GIF or WebP images only; to inspect it use execute_command, e.g. \`xxd ${rel} | head -n 20\`.`,
    );
  }
  const lines = splitLines(content.text);
  const range = `${start ?? 1}-${end ?? ''}`;
  const hash = contentHash(bytes);
  if (memory.seen(ctx.thread, rel, range, hash)) {
    return {
      content: `${UNCHANGED} (${plural(lines.length, 'line')}); its content is in your earlier read_file result.`,
      display: { title: `Read ${rel}`, summary: UNCHANGED_SUMMARY },
    };
  }
  const excerpt = renderLines(rel, lines, start, end, startName);
  memory.remember(ctx.thread, rel, range, hash);
  return { content: excerpt.text, display: { title: `Read ${rel}`, summary: shownLines(excerpt) } };
}

const UNCHANGED = 'File unchanged since your last read of it';
const UNCHANGED_SUMMARY = 'unchanged since the last read';

/**
 * What a finished read showed UIs, read back from its result as stored (a resumed session's
 * transcript: the display of live events is not stored), so the row says `Read a.ts · 120
 * lines` as it did live, not the model's `<file name=…>` text. Undefined for what is not a
 * read's result.
 */
export function readResultDisplay(content: readonly ResultContent[]): ToolDisplay | undefined {
  const text = content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
  if (text.startsWith(UNCHANGED)) return { summary: UNCHANGED_SUMMARY };
  const image = /^Image (.+) \(([^,()]+), (\d+) bytes\):$/.exec(text);
  if (image && content.some((c) => c.type === 'image')) return { title: `Read ${image[1]}`, summary: `image, ${image[2]}, ${plural(Number(image[3]), 'byte')}` };
  const lines = text.split('\n');
  const header = /^<file name="(.*)" lines="(\d+)">$/.exec(lines[0] ?? '');
  if (!header) return undefined;
  const total = Number(header[2]);
  const shown: number[] = [];
  for (const line of lines.slice(1)) {
    if (line === '</file>') break;
    const n = /^ *(\d+)\t/.exec(line);
    if (n) shown.push(Number(n[1]));
  }
  const first = shown[0] ?? 0;
  return { title: `Read ${header[1]}`, summary: shownLines({ text, first, last: shown.at(-1) ?? 0, total }) };
}

/** What a read showed, for UIs: `120 lines`, `lines 40-60 of 120`, `empty file`. */
function shownLines(e: Excerpt): string {
  if (e.total === 0) return 'empty file';
  if (e.first === 1 && e.last === e.total) return plural(e.total, 'line');
  return `lines ${e.first}-${e.last} of ${e.total}`;
}

interface Excerpt {
  text: string;
  /** The lines shown, 1-based and inclusive, of `total`. */
  first: number;
  last: number;
  total: number;
}

/** The numbered excerpt, cut by line and character budgets, with a note on how to read on. */
export function renderLines(rel: string, lines: readonly string[], start?: number, end?: number, startName = 'start_line'): Excerpt {
  const total = lines.length;
  const header = `<file name="${rel}" lines="${total}">`;
  if (total === 0) return { text: `${header}\n(empty file)\n</file>`, first: 0, last: 0, total };
  const first = start ?? 1;
  if (first > total) {
    throw new ToolError(
      `${startName} ${first} is past the end of ${rel}, which has ${plural(total, 'line')}. ` +
        `Read from line 1 to ${total} (or less).`,
    );
  }
  const wantedLast = Math.min(end ?? total, total);
  const out: string[] = [header];
  let chars = 0;
  let last = first - 1;
  for (let n = first; n <= wantedLast; n++) {
    if (n - first >= READ_LIMITS.maxLines) break;
    const line = numbered(n, clipLine(lines[n - 1].replace(/\r$/, ''), READ_LIMITS.maxLineChars));
    // Always show at least one line, however long, so a read always makes progress.
    if (chars + line.length > READ_LIMITS.maxChars && n > first) break;
    chars += line.length + 1;
    out.push(line);
    last = n;
  }
  out.push('</file>');
  const notes: string[] = [];
  if (last < wantedLast) {
    notes.push(
      `[Showing lines ${first}-${last} of ${total}; the output limit was reached. ` +
        `To read on, call read_file with ${startName}=${last + 1}.]`,
    );
  } else if (end !== undefined && end > total) {
    notes.push(`[The file ends at line ${total}; line ${end} is past its end.]`);
  }
  return { text: [...out, ...notes].join('\n'), first, last, total };
}
