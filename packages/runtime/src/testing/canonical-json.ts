// One spelling per value, for comparing what a client sent back with what the fake produced:
// key order is not content (clients rebuild objects freely), cache markers are not content either
// (they move on every request), but every other value must be exactly what it was.
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level and every `cache_control` key left out. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(normalise(value)) ?? 'null';
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** sha256 of the canonical JSON. */
export function digestOf(value: unknown): string {
  return sha256(canonicalJson(value));
}

function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (key === 'cache_control') continue;
    out[key] = normalise((value as Record<string, unknown>)[key]);
  }
  return out;
}
