// Tab completion of `@path` mentions over the repository's files, pure: like a shell, one level
// at a time (`@src/ma` → `@src/main.ts ` or `@src/math/`), the common prefix when several match.

export interface Completion {
  value: string;
  cursor: number;
  /** What the mention could still become, as shown under the prompt (several only). */
  candidates: string[];
}

/** Candidates listed under the prompt at most; the rest are counted. */
const SHOWN = 30;

/**
 * Completes the `@` word that ends at `cursor` against `paths` (repository files, `/`-separated);
 * undefined when the cursor is not at the end of an `@` word. A name that matches no path from the
 * top matches files by their base name (`@main` → `@src/main.ts`).
 */
export function completeMention(value: string, cursor: number, paths: readonly string[]): Completion | undefined {
  const before = value.slice(0, cursor);
  const m = /(?<=^|\s)@(?:"([^"\n]*)|([^\s"]*))$/.exec(before);
  if (!m) return undefined;
  const start = m.index;
  const fragment = m[1] ?? m[2];
  let entries = nextLevel(fragment, paths);
  if (entries.length === 0 && !fragment.includes('/') && fragment !== '') {
    entries = paths.filter((p) => baseName(p).startsWith(fragment));
  }
  if (entries.length === 0) return { value, cursor, candidates: [] };
  if (entries.length === 1) {
    const entry = entries[0];
    // A file is done (a space follows); a folder goes on.
    return replace(value, start, cursor, mentionText(entry, !entry.endsWith('/')), []);
  }
  const common = commonPrefix(entries);
  const candidates = entries.slice(0, SHOWN).map((e) => `@${e}`);
  if (entries.length > SHOWN) candidates.push(`… ${entries.length - SHOWN} more`);
  // The base-name fallback may share no prefix with what was typed: the word stays as it was.
  const next = common.length > fragment.length && common.startsWith(fragment) ? mentionText(common, false) : before.slice(start);
  return replace(value, start, cursor, next, candidates);
}

/** The files and folders one level below what `fragment` has typed, that start with it. */
function nextLevel(fragment: string, paths: readonly string[]): string[] {
  const dir = fragment.slice(0, fragment.lastIndexOf('/') + 1);
  const out = new Set<string>();
  for (const p of paths) {
    if (!p.startsWith(fragment)) continue;
    const slash = p.indexOf('/', dir.length);
    out.add(slash === -1 ? p : p.slice(0, slash + 1));
  }
  return [...out].sort();
}

function mentionText(path: string, done: boolean): string {
  const quoted = /\s/.test(path) ? `@"${path}${done ? '"' : ''}` : `@${path}`;
  return done ? `${quoted} ` : quoted;
}

function replace(value: string, start: number, end: number, text: string, candidates: string[]): Completion {
  return { value: value.slice(0, start) + text + value.slice(end), cursor: start + text.length, candidates };
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function commonPrefix(items: readonly string[]): string {
  let common = items[0];
  for (const item of items) while (!item.startsWith(common)) common = common.slice(0, -1);
  return common;
}
