// File names that are not valid UTF-8 (a Latin-1 "café" is the bytes 63 61 66 e9). Paths travel
// through this package as strings, and decoding such a name the usual way turns the odd bytes into
// U+FFFD, a name no file has: changes to it would be dropped without a word. Instead the odd bytes
// are kept as lone surrogates, U+DC00 + the byte (Python's "surrogateescape"), which no decoded
// name can hold: the string still names exactly one file, its bytes come back with nameBytes, and
// hasOddBytes tells such a path from the rest. Diffs leave these paths out, saying so (see
// OmitRule 'non-utf8-name'): patches, the file views and the user's display are UTF-8 throughout.
import { isUtf8 } from 'node:buffer';
import { nulParts } from './git.js';

// In a u-mode pattern a surrogate pair is one code point, so only lone surrogates match.
const LONE_SURROGATE = /\p{Cs}/u;
const ESCAPE_BASE = 0xdc00;

/** A name's (or path's) bytes as a string: UTF-8 decoded, any other byte escaped (see above). */
export function escapedName(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isUtf8(buf)) return buf.toString('utf8');
  let out = '';
  let i = 0;
  while (i < buf.length) {
    const n = sequenceLength(buf, i);
    if (n === 0) {
      out += String.fromCharCode(ESCAPE_BASE + buf[i]);
      i++;
    } else {
      out += buf.toString('utf8', i, i + n);
      i += n;
    }
  }
  return out;
}

/** Whether a string from escapedName stands for bytes that are not UTF-8. */
export function hasOddBytes(name: string): boolean {
  return LONE_SURROGATE.test(name);
}

/** The bytes a string from escapedName stands for (any other string: its UTF-8). */
export function nameBytes(name: string): Buffer {
  if (!hasOddBytes(name)) return Buffer.from(name, 'utf8');
  const parts: Buffer[] = [];
  for (const ch of name) {
    const code = ch.charCodeAt(0);
    parts.push(ch.length === 1 && code >= ESCAPE_BASE + 0x80 && code <= ESCAPE_BASE + 0xff ? Buffer.of(code - ESCAPE_BASE) : Buffer.from(ch, 'utf8'));
  }
  return Buffer.concat(parts);
}

/** What fs calls take for `root`/`rel` (rel from escapedName): a string unless it has odd bytes. */
export function fsPath(root: string, rel: string): string | Buffer {
  const joined = rel === '' ? root : `${root}/${rel}`;
  return hasOddBytes(rel) ? nameBytes(joined) : joined;
}

/** `paths` as git's `-z --stdin` takes them: each one's bytes, then a NUL. */
export function nulList(paths: readonly string[]): Buffer {
  if (!paths.some(hasOddBytes)) return Buffer.from(paths.map((p) => `${p}\0`).join(''), 'utf8');
  return Buffer.concat(paths.flatMap((p) => [nameBytes(p), Buffer.of(0)]));
}

/** The paths of git's `-z` output, escaped where they are not UTF-8. */
export function nulNames(out: Buffer): string[] {
  return nulParts(out).map(escapedName);
}

/**
 * A path from escapedName for a person: the odd bytes as git's octal escapes (`caf\351.txt`, as
 * `git status` shows the name), a backslash doubled so that the escapes read one way.
 */
export function shownName(name: string): string {
  if (!hasOddBytes(name)) return name;
  return name.replace(/\\|\p{Cs}/gu, (m) => (m === '\\' ? '\\\\' : `\\${(m.charCodeAt(0) - ESCAPE_BASE).toString(8).padStart(3, '0')}`));
}

/** Length of the valid UTF-8 sequence at `i`, or 0 (the byte is odd). Table 3-7 of the Unicode standard. */
function sequenceLength(b: Buffer, i: number): number {
  const lead = b[i];
  if (lead < 0x80) return 1;
  let n: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) n = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    n = 3;
    if (lead === 0xe0) lo = 0xa0;
    if (lead === 0xed) hi = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    n = 4;
    if (lead === 0xf0) lo = 0x90;
    if (lead === 0xf4) hi = 0x8f;
  } else return 0;
  if (i + n > b.length) return 0;
  if (b[i + 1] < lo || b[i + 1] > hi) return 0;
  for (let k = 2; k < n; k++) if (b[i + k] < 0x80 || b[i + k] > 0xbf) return 0;
  return n;
}
