import { hunkId, type FileStatus, type ReviewDiff, type ReviewFile } from './review-diff.js';

/** One file's part of a git patch: its header lines and its hunks (each with its @@ line). */
interface Section {
  path: string;
  status: FileStatus;
  header: string[];
  hunks: string[][];
}

/**
 * Splits a `git diff` patch into file sections. Binary files, pure renames and mode changes have
 * no text hunks; they are reviewed (and kept or dropped) whole.
 */
export function parsePatch(patch: string): Section[] {
  const sections: Section[] = [];
  let cur: Section | null = null;
  let hunk: string[] | null = null;
  const lines = patch.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    if (line.startsWith('diff --git ')) {
      cur = { path: pathFromDiffLine(line), status: 'modified', header: [line], hunks: [] };
      hunk = null;
      sections.push(cur);
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('@@')) {
      hunk = [line];
      cur.hunks.push(hunk);
      continue;
    }
    if (hunk) {
      hunk.push(line);
      continue;
    }
    cur.header.push(line);
    if (line.startsWith('new file mode')) cur.status = 'added';
    else if (line.startsWith('deleted file mode')) cur.status = 'deleted';
    else if (line.startsWith('rename to ')) {
      cur.status = 'renamed';
      cur.path = unquote(line.slice('rename to '.length));
    } else if (line.startsWith('+++ ') && line !== '+++ /dev/null') cur.path = unquote(line.slice(4)).replace(/^b\//, '');
    else if (line.startsWith('--- ') && cur.status === 'deleted' && line !== '--- /dev/null') {
      cur.path = unquote(line.slice(4)).replace(/^a\//, '');
    }
  }
  return sections;
}

/** The reviewable shape of a patch (what the TUI shows). */
export function toReviewDiff(patch: string): ReviewDiff {
  return {
    files: parsePatch(patch).map(
      (s): ReviewFile => ({
        path: s.path,
        status: s.status,
        hunks: s.hunks.map(([header, ...body]) => ({ header: header!, lines: body })),
      }),
    ),
  };
}

/** The patch with only the accepted hunks (ids as in the review: `path#index`). */
export function selectHunks(patch: string, accepted: ReadonlySet<string>): string {
  const out: string[] = [];
  for (const s of parsePatch(patch)) {
    if (s.hunks.length === 0) {
      if (accepted.has(hunkId(s.path, 0))) out.push(...s.header);
      continue;
    }
    const kept = s.hunks.filter((_, i) => accepted.has(hunkId(s.path, i)));
    if (kept.length === 0) continue;
    out.push(...s.header, ...kept.flat());
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

function pathFromDiffLine(line: string): string {
  // `diff --git a/x b/x`: for an unrenamed file both halves are equal, which finds the split
  // even when the path has spaces; the +++ or rename line refines it later.
  const rest = line.slice('diff --git '.length);
  if (rest.startsWith('"')) return unquote(rest.slice(0, rest.indexOf('" ') + 1)).replace(/^a\//, '');
  const half = (rest.length - 1) / 2;
  return Number.isInteger(half) ? rest.slice(2, half) : rest.split(' ')[0]!.replace(/^a\//, '');
}

/** Undoes git's C-style quoting of unusual paths ("a/caf\303\251"). */
function unquote(s: string): string {
  const t = s.replace(/\t$/, '');
  if (!t.startsWith('"') || !t.endsWith('"')) return t;
  const bytes: number[] = [];
  const body = t.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const n = body[++i]!;
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else {
      bytes.push(({ n: 10, t: 9, '"': 34, '\\': 92 } as Record<string, number>)[n] ?? n.charCodeAt(0));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
