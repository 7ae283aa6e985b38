// Git's quoting of unusual paths, undone. Git writes a path that holds a control character, a
// double quote, a backslash or (with core.quotePath, the default) a byte above 0x7F between double
// quotes with C-style escapes: "caf\303\251.txt", "tab\there". The escapes stand for bytes, and
// the bytes need not be UTF-8, so the work is done on bytes; the string forms decode at the end.
// The only place in the repository that reads git's quoting: everything else calls these.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const TAB = 0x09;

/** The byte each single-letter escape stands for. */
const SIMPLE: Readonly<Record<number, number>> = {
  0x61: 7, // \a
  0x62: 8, // \b
  0x74: 9, // \t
  0x6e: 10, // \n
  0x76: 11, // \v
  0x66: 12, // \f
  0x72: 13, // \r
  [QUOTE]: QUOTE,
  [BACKSLASH]: BACKSLASH,
};

const isOctal = (b: number | undefined): b is number => b !== undefined && b >= 0x30 && b <= 0x37;

/**
 * Decodes a quoted path (the quotes included) into its bytes; a path that does not start and end
 * with a double quote is git's plain form and comes back as it is.
 */
export function unquoteGitPathBytes(raw: Buffer): Buffer {
  if (raw.length < 2 || raw[0] !== QUOTE || raw[raw.length - 1] !== QUOTE) return raw;
  return decodeEscapes(raw, 1, raw.length - 1);
}

/** Decodes git's C-style quoted path ("a\tb" or "\303\251"), leaving plain paths alone. */
export function unquoteGitPath(p: string): string {
  return unquoteGitPathBytes(Buffer.from(p, 'utf8')).toString('utf8');
}

/**
 * Reads one path token at `start` of a header line: a quoted path up to its closing quote, or a
 * plain one up to `end`. Returns the path's bytes and where the token ended; null for a quote
 * that never closes. For lines with two paths (`diff --git a/x b/y`), see splitPathPair.
 */
export function readGitPath(line: Buffer, start: number, end = line.length): { path: Buffer; end: number } | null {
  if (line[start] !== QUOTE) return { path: line.subarray(start, end), end };
  for (let i = start + 1; i < end; i++) {
    if (line[i] === BACKSLASH) i++;
    else if (line[i] === QUOTE) return { path: decodeEscapes(line, start + 1, i), end: i + 1 };
  }
  return null;
}

/**
 * The two paths of `a/x b/y` (the rest of a `diff --git` line), prefixes still on. When neither
 * is quoted the space between them is ambiguous (paths may hold spaces): git writes the same path
 * twice unless the file was renamed or copied, so the split that gives two equal paths is taken;
 * null when there is none (a rename: its `rename from`/`rename to` lines name the paths).
 */
export function splitPathPair(rest: Buffer): { a: Buffer; b: Buffer } | null {
  if (rest[0] === QUOTE || rest[rest.length - 1] === QUOTE) {
    // At least one side is quoted: the quotes delimit it.
    const open = rest[0] === QUOTE ? -1 : rest.indexOf(' "');
    const first = open < 0 ? readGitPath(rest, 0) : { path: rest.subarray(0, open), end: open };
    if (!first || rest[first.end] !== SPACE) return null;
    const second = readGitPath(rest, first.end + 1);
    return second && second.end === rest.length ? { a: first.path, b: second.path } : null;
  }
  if (rest.length % 2 === 0) return null;
  const half = (rest.length - 1) / 2;
  const a = rest.subarray(0, half);
  const b = rest.subarray(half + 1);
  if (rest[half] !== SPACE || !a.subarray(2).equals(b.subarray(2))) return null;
  return { a, b };
}

/**
 * The path of a `--- a/x`, `+++ b/x`, `rename to x` line (its rest): git ends a plain path that
 * holds a space with a tab, which is not part of it. Null for a quote that never closes.
 */
export function readHeaderPath(rest: Buffer): Buffer | null {
  const end = rest[0] !== QUOTE && rest[rest.length - 1] === TAB ? rest.length - 1 : rest.length;
  return readGitPath(rest, 0, end)?.path ?? null;
}

function decodeEscapes(buf: Buffer, start: number, end: number): Buffer {
  const out: number[] = [];
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== BACKSLASH || i + 1 >= end) {
      out.push(c);
      continue;
    }
    const n = buf[i + 1];
    if (isOctal(n)) {
      // Up to three octal digits: one byte.
      let value = 0;
      let j = i + 1;
      for (; j < end && j < i + 4 && isOctal(buf[j]); j++) value = value * 8 + (buf[j] - 0x30);
      out.push(value & 0xff);
      i = j - 1;
    } else {
      out.push(SIMPLE[n] ?? n);
      i += 1;
    }
  }
  return Buffer.from(out);
}
