import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';

export interface FileDiff {
  /** Unified diff with `--- a/P` / `+++ b/P` headers and 3 lines of context. */
  text: string;
  added: number;
  removed: number;
}

/** Diffs shown to the model are cut here: the edit's own lines are what matter. */
const MAX_DIFF_LINES = 300;

/** The unified diff of one file's change; `before` null for a new file. */
export function fileDiff(rel: string, before: string | null, after: string): FileDiff {
  const patch = structuredPatch(before === null ? '/dev/null' : `a/${rel}`, `b/${rel}`, before ?? '', after, undefined, undefined, {
    context: 3,
  });
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++;
      else if (line.startsWith('-')) removed++;
    }
  }
  const lines = formatPatch(patch, FILE_HEADERS_ONLY).replace(/\n$/, '').split('\n');
  const text =
    lines.length <= MAX_DIFF_LINES
      ? lines.join('\n')
      : [...lines.slice(0, MAX_DIFF_LINES), `[... ${lines.length - MAX_DIFF_LINES} more diff lines not shown ...]`].join('\n');
  return { text, added, removed };
}

/** `+3 -1`, as display lines and results summarise a change. */
export function changeSummary(d: Pick<FileDiff, 'added' | 'removed'>): string {
  return `+${d.added} -${d.removed}`;
}
