import { createHash } from 'node:crypto';

/**
 * Ids derived from other ids, so that re-running a step after a crash produces the same ids and
 * the durable queue's dedup recognises the repeat. Tool-use ids keep to the API's [A-Za-z0-9_-].
 */
export function derivedId(prefix: string, ...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  return `${prefix}${h.digest('base64url').slice(0, 22)}`;
}
