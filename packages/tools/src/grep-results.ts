import { clipLine, compareCodePoints, plural } from './text-lines.js';

export const GREP_LIMITS = {
  /** Matching lines per file (ripgrep's --max-count). */
  perFile: 20,
  /** Matching lines overall; the search stops once it has more. */
  total: 200,
  contextLines: 2,
  maxLineChars: 300,
} as const;

interface FileHits {
  matches: number;
  /** Line number -> text and whether it matched (context otherwise). */
  lines: Map<number, { text: string; match: boolean }>;
}

type RgText = { text?: string; bytes?: string };

/** One line of `rg --json` (the fields this tool uses). */
interface RgMessage {
  type: 'begin' | 'match' | 'context' | 'end' | 'summary';
  data: { path?: RgText; lines?: RgText; line_number?: number | null };
}

/** Folds ripgrep's JSON messages into per-file hits, and renders them sorted by path. */
export class GrepResults {
  private readonly files = new Map<string, FileHits>();
  private matches = 0;
  truncated = false;

  /** Takes one line of `rg --json`; returns false once the overall cap is passed. */
  add(jsonLine: string): boolean {
    if (jsonLine === '') return true;
    const msg = JSON.parse(jsonLine) as RgMessage;
    if (msg.type !== 'match' && msg.type !== 'context') return true;
    const file = decode(msg.data.path);
    const lineNo = msg.data.line_number;
    if (file === undefined || lineNo == null) return true;
    if (msg.type === 'match' && this.matches >= GREP_LIMITS.total) {
      this.truncated = true;
      return false;
    }
    let hits = this.files.get(file);
    if (!hits) this.files.set(file, (hits = { matches: 0, lines: new Map() }));
    // ripgrep reports matching lines in the trailing context of its --max-count-th match as
    // matches too; past the per-file cap they are context.
    const isMatch = msg.type === 'match' && hits.matches < GREP_LIMITS.perFile;
    // One message may carry several lines (a match spanning lines); number each.
    const texts = (decode(msg.data.lines) ?? '').replace(/\r?\n$/, '').split(/\r?\n/);
    texts.forEach((text, i) => {
      const prev = hits.lines.get(lineNo + i);
      hits.lines.set(lineNo + i, { text, match: isMatch || prev?.match === true });
    });
    if (isMatch) {
      hits.matches++;
      this.matches++;
    }
    return true;
  }

  get matchCount(): number {
    return this.matches;
  }

  /** Files with a match (the leading context of a match past the cap creates an entry too). */
  private matchedFiles(): string[] {
    return [...this.files.entries()].filter(([, hits]) => hits.matches > 0).map(([file]) => file);
  }

  /** The outcome in a few words, for UIs. */
  summary(): string {
    if (this.matches === 0) return 'no matches';
    const files = plural(this.matchedFiles().length, 'file');
    if (this.truncated) return `more than ${GREP_LIMITS.total} matches, the first ${this.matches} shown (${files})`;
    return `${plural(this.matches, 'match', 'matches')} in ${files}`;
  }

  render(query: string): string {
    if (this.matches === 0) return `No matches found for ${JSON.stringify(query)} (files ignored by .gitignore are not searched).`;
    const files = this.matchedFiles().sort(compareCodePoints);
    const head = this.truncated
      ? `Found more than ${GREP_LIMITS.total} matches for ${JSON.stringify(query)}; showing the first ${plural(this.matches, 'match', 'matches')} in ${plural(files.length, 'file')}. Narrow the search with include, exclude or a more specific query.`
      : `Found ${plural(this.matches, 'match', 'matches')} for ${JSON.stringify(query)} in ${plural(files.length, 'file')}.`;
    const out = [head];
    for (const file of files) {
      const hits = this.files.get(file)!;
      out.push('', hits.matches >= GREP_LIMITS.perFile ? `${file} (first ${GREP_LIMITS.perFile} matches)` : file);
      let prev: number | undefined;
      for (const n of [...hits.lines.keys()].sort((a, b) => a - b)) {
        const line = hits.lines.get(n)!;
        if (prev !== undefined && n > prev + 1) out.push('  --');
        out.push(`${String(n).padStart(6)}${line.match ? ':' : '-'} ${clipLine(line.text, GREP_LIMITS.maxLineChars)}`);
        prev = n;
      }
    }
    return out.join('\n');
  }
}

function decode(t: RgText | undefined): string | undefined {
  if (!t) return undefined;
  if (t.text !== undefined) return t.text;
  return t.bytes === undefined ? undefined : Buffer.from(t.bytes, 'base64').toString('utf8');
}
