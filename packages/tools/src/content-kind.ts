import type { ImageMediaType } from '@infinity-code/runtime';

export type ContentKind =
  | { kind: 'image'; mediaType: ImageMediaType }
  | { kind: 'text'; text: string }
  | { kind: 'binary'; why: string };

/** How much of the start is checked for NUL bytes (what git and grep look at, roughly). */
const SNIFF_BYTES = 8_000;

/** Image formats the model accepts, recognised by their magic bytes rather than the name. */
export function imageType(b: Buffer): ImageMediaType | undefined {
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return 'image/png';
  }
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') {
    return 'image/webp';
  }
  return undefined;
}

/** Image, UTF-8 text (a BOM is kept, so edits write it back), or something else. */
export function classify(b: Buffer): ContentKind {
  const mediaType = imageType(b);
  if (mediaType) return { kind: 'image', mediaType };
  if (b.subarray(0, SNIFF_BYTES).includes(0)) return { kind: 'binary', why: 'it contains NUL bytes' };
  try {
    return { kind: 'text', text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b) };
  } catch {
    return { kind: 'binary', why: 'it is not valid UTF-8 text' };
  }
}
