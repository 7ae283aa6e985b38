import { createHash, randomBytes } from 'node:crypto';

/**
 * Ids derived from other ids, so that re-running a step after a crash produces the same ids and
 * the durable queue's dedup recognises the repeat. Tool-use ids keep to the API's [A-Za-z0-9_-].
 */
export function derivedId(prefix: string, ...parts: string[]): string {
  return `${prefix}${digest(parts).toString('base64url').slice(0, 22)}`;
}

// Thread ids are short because models write them: every spawn_thread call carries the caller's
// whole stack (child_of), close_thread and send_message_to_child name a thread, and the user pays
// for each output token and waits for it to stream. A UUID is 36 characters; 64 bits as
// lowercase base-36 digits are 13. Within one store that is ample: a collision becomes likely
// only past ~4 billion threads.
const THREAD_ID_BYTES = 8;
const THREAD_ID_DIGITS = 13;

/** A thread id derived from other ids (see derivedId), e.g. a child's from its parent and spawn call. */
export function derivedThreadId(prefix: string, ...parts: string[]): string {
  return `${prefix}${base36(digest(parts).subarray(0, THREAD_ID_BYTES))}`;
}

/** A new root thread's id, which is also its session's. */
export function newThreadId(): string {
  return `th_${base36(randomBytes(THREAD_ID_BYTES))}`;
}

function digest(parts: readonly string[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  return h.digest();
}

function base36(bytes: Buffer): string {
  return BigInt(`0x${bytes.toString('hex')}`).toString(36).padStart(THREAD_ID_DIGITS, '0');
}
