import { clipLine, compareCodePoints, plural } from './text-lines.js';

export const GREP_LIMITS = {
  /** Entries shown when head_limit is not given: file paths and per-file counts... */
  defaultHead: 100,
  /** ...and lines (matches and context) in content mode. */
  defaultContentLines: 200,
  /** Characters of results shown when head_limit is not given... */
  maxChars: 15_000,
  /** ...and when it is: a larger head_limit is an explicit ask, but still not unbounded. */
  maxCharsWithHead: 60_000,
  maxLineChars: 300,
  /**
   * Collected before the search is stopped. Below these the whole result is sorted, so head_limit
   * and offset page through a stable order; a search past them says so and asks to narrow it.
   */
  maxFiles: 50_000,
  maxContentLines: 20_000,
} as const;

export type OutputMode = 'files_with_matches' | 'content' | 'count';

/** Which slice of the results to show: offset/head_limit, and the character budget. */
export interface Page {
  offset: number;
  head: number;
  maxChars: number;
}

export interface Rendered {
  text: string;
  /** The outcome in a few words, for UIs. */
  summary: string;
}

type RgText = { text?: string; bytes?: string };

/** One line of `rg --json` (the fields this tool uses). */
interface RgMessage {
  type: 'begin' | 'match' | 'context' | 'end' | 'summary';
  data: { path?: RgText; lines?: RgText; line_number?: number | null };
}

/** Collects what ripgrep finds in one of the three output modes, and renders one page of it. */
export interface GrepCollector {
  /** Takes one line (or NUL-terminated entry) of ripgrep's output; false once past the collection cap. */
  add(line: string): boolean;
  readonly found: boolean;
  /** False when the search was stopped at the collection cap (there is more). */
  complete: boolean;
  render(page: Page): Rendered;
}

const NARROW = 'narrow the search with path, glob, type or a more specific pattern';

/** The note under a page that does not show everything. */
function pageNote(unit: string, from: number, to: number, total: number, complete: boolean): string | undefined {
  if (!complete) {
    return `[Showing ${unit} ${from + 1}-${to} of the first ${total} found; the search stopped there and more match: ${NARROW}.]`;
  }
  if (from >= total) return `[offset ${from} is past the end: there ${total === 1 ? 'is' : 'are'} ${plural(total, unit.replace(/s$/, ''), unit)}.]`;
  if (from === 0 && to >= total) return undefined;
  const more = total - to;
  return (
    `[Showing ${unit} ${from + 1}-${to} of ${total}.` +
    (more > 0 ? ` ${more} more: pass offset=${to} to see them, or ${NARROW}.]` : ']')
  );
}

/** Takes entries while they fit the page's count and character budget (at least one). */
function take(entries: readonly string[], page: Page): string[] {
  const out: string[] = [];
  let chars = 0;
  for (const e of entries.slice(page.offset, page.offset + page.head)) {
    if (out.length > 0 && chars + e.length + 1 > page.maxChars) break;
    chars += e.length + 1;
    out.push(e);
  }
  return out;
}

/** files_with_matches: the paths (`rg --files-with-matches --null`), sorted by path. */
export class FileMatches implements GrepCollector {
  private readonly files: string[] = [];
  complete = true;

  add(entry: string): boolean {
    if (entry === '') return true;
    if (this.files.length >= GREP_LIMITS.maxFiles) {
      this.complete = false;
      return false;
    }
    this.files.push(entry);
    return true;
  }

  get found(): boolean {
    return this.files.length > 0;
  }

  render(page: Page): Rendered {
    const files = [...this.files].sort(compareCodePoints);
    const shown = take(files, page);
    const note = pageNote('files', page.offset, page.offset + shown.length, files.length, this.complete);
    const total = this.complete ? plural(files.length, 'file') : `more than ${files.length} files`;
    return {
      text: [`Found ${total}.`, ...shown, ...(note ? [note] : [])].join('\n'),
      summary: shown.length < files.length ? `${total}, ${shown.length} shown` : total,
    };
  }
}

/** count: matching lines per file (`rg --count --with-filename --null`: `path\0N`), sorted by path. */
export class MatchCounts implements GrepCollector {
  private readonly counts: Array<{ file: string; count: number }> = [];
  complete = true;

  add(line: string): boolean {
    const nul = line.lastIndexOf('\0');
    if (nul < 0) return true;
    if (this.counts.length >= GREP_LIMITS.maxFiles) {
      this.complete = false;
      return false;
    }
    this.counts.push({ file: line.slice(0, nul), count: Number(line.slice(nul + 1)) || 0 });
    return true;
  }

  get found(): boolean {
    return this.counts.length > 0;
  }

  render(page: Page): Rendered {
    const counts = [...this.counts].sort((a, b) => compareCodePoints(a.file, b.file));
    const sum = counts.reduce((n, c) => n + c.count, 0);
    const shown = take(
      counts.map((c) => `${c.file}:${c.count}`),
      page,
    );
    const note = pageNote('files', page.offset, page.offset + shown.length, counts.length, this.complete);
    const total = `${plural(sum, 'matching line')} in ${plural(counts.length, 'file')}`;
    const head = this.complete ? `Found ${total}.` : `Found more than ${total} (the search stopped early).`;
    return { text: [head, ...shown, ...(note ? [note] : [])].join('\n'), summary: total };
  }
}

interface Line {
  text: string;
  match: boolean;
}

interface Hit {
  file: string;
  line: number;
  text: string;
  match: boolean;
}

/** content: matching lines and their context (`rg --json`), grouped by file, sorted by path and line. */
export class ContentMatches implements GrepCollector {
  private readonly files = new Map<string, Map<number, Line>>();
  private matches = 0;
  private lines = 0;
  complete = true;

  constructor(private readonly opts: { lineNumbers: boolean; context: boolean }) {}

  add(jsonLine: string): boolean {
    if (jsonLine === '') return true;
    // Cheap test before parsing: begin, end and summary messages carry nothing shown.
    if (!jsonLine.startsWith('{"type":"match"') && !jsonLine.startsWith('{"type":"context"')) return true;
    const msg = JSON.parse(jsonLine) as RgMessage;
    const file = decode(msg.data.path);
    const lineNo = msg.data.line_number;
    if (file === undefined || lineNo == null) return true;
    if (this.lines >= GREP_LIMITS.maxContentLines) {
      this.complete = false;
      return false;
    }
    let hits = this.files.get(file);
    if (!hits) this.files.set(file, (hits = new Map<number, Line>()));
    const isMatch = msg.type === 'match';
    // One message may carry several lines (a multiline match); number each.
    const texts = (decode(msg.data.lines) ?? '').replace(/\r?\n$/, '').split(/\r?\n/);
    texts.forEach((text, i) => {
      const prev = hits.get(lineNo + i);
      if (!prev) this.lines++;
      // Stored clipped: a minified file's lines must not fill the memory.
      hits.set(lineNo + i, { text: prev?.text ?? clipLine(text, GREP_LIMITS.maxLineChars), match: isMatch || prev?.match === true });
    });
    if (isMatch) this.matches++;
    return true;
  }

  get found(): boolean {
    return this.matches > 0;
  }

  private matchedFiles(): string[] {
    return [...this.files.entries()].filter(([, hits]) => [...hits.values()].some((h) => h.match)).map(([file]) => file);
  }

  render(page: Page): Rendered {
    const files = this.matchedFiles().sort(compareCodePoints);
    const all: Hit[] = files.flatMap((file) =>
      [...this.files.get(file)!.entries()].sort(([a], [b]) => a - b).map(([line, h]) => ({ file, line, text: h.text, match: h.match })),
    );
    const out: string[] = [];
    let chars = 0;
    let shown = 0;
    let prev: Hit | undefined;
    for (const hit of all.slice(page.offset, page.offset + page.head)) {
      const body = this.opts.lineNumbers ? `${hit.line}${hit.match ? ':' : '-'}${hit.text}` : hit.text;
      const lines: string[] = [];
      if (prev?.file !== hit.file) lines.push(...(prev ? [''] : []), hit.file);
      else if (this.opts.context && hit.line > prev.line + 1) lines.push('--');
      lines.push(body);
      const size = lines.reduce((n, l) => n + l.length + 1, 0);
      if (shown > 0 && chars + size > page.maxChars) break;
      out.push(...lines);
      chars += size;
      shown++;
      prev = hit;
    }
    const note = pageNote('lines', page.offset, page.offset + shown, all.length, this.complete);
    const total = `${plural(this.matches, 'matching line')} in ${plural(files.length, 'file')}`;
    const head = this.complete ? `Found ${total}.` : `Found more than ${total} (the search stopped early).`;
    return { text: [head, ...out, ...(note ? [note] : [])].join('\n'), summary: total };
  }
}

function decode(t: RgText | undefined): string | undefined {
  if (!t) return undefined;
  if (t.text !== undefined) return t.text;
  return t.bytes === undefined ? undefined : Buffer.from(t.bytes, 'base64').toString('utf8');
}
