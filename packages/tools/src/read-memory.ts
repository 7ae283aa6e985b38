import { createHash } from 'node:crypto';
import type { ThreadRecord } from '@infinity-code/runtime';

/** What the memory looks at of the calling thread (ToolContext.thread). */
export type ThreadState = Pick<Readonly<ThreadRecord>, 'id' | 'contextTokens' | 'messageCount'>;

export const READ_MEMORY_LIMITS = {
  /** Files remembered (per thread and path), least recently used forgotten first. */
  files: 4_000,
  /** Threads whose context size is followed (to notice compaction). */
  threads: 1_000,
  /** Ranges remembered per file (the latest ones). */
  rangesPerFile: 8,
  /** A read older than this many of the thread's own messages is sent again. */
  maxAgeMessages: 40,
} as const;

interface FileEntry {
  /** The whole file's content hash when the ranges were read. */
  hash: string;
  /** The thread's context epoch then (see observe). */
  epoch: number;
  /** Range -> the thread's message count when it was read. */
  ranges: Map<string, number>;
}

interface ThreadEntry {
  contextTokens: number;
  epoch: number;
}

/**
 * What each thread has read, so an unchanged re-read can point at the earlier result instead of
 * sending the file again (read_file). Bounded and idle-cheap: two LRU maps (Map insertion order),
 * nothing per thread but a map entry, no timers. A forgotten read is simply sent again.
 *
 * The risk is claiming content that is no longer in the thread's context, after its history was
 * compacted. ToolContext has no compaction marker: the thread's own message count never drops
 * (a summary replaces messages, it doesn't renumber them). Its context size does: applying a
 * summary sets `contextTokens` to 0 and the next completion reports the smaller size, while
 * without compaction it only grows. So every file-tool call observes it, and a drop starts a new
 * epoch, which invalidates the thread's reads. A compaction no call saw the drop of (the context
 * grew back past its old size with only commands run in between) is covered by an age bound:
 * reads older than `maxAgeMessages` of the thread's own messages are sent again. Last, an
 * "unchanged" answer uses the read up: asking for the same range again sends it, so a model that
 * can't find the earlier result gets it by asking twice. Writes through edit_file and
 * create_file forget the file (`forget`), and any other change shows in the hash.
 */
export class ReadMemory {
  private readonly files = new Map<string, FileEntry>();
  private readonly threads = new Map<string, ThreadEntry>();
  /** Epochs are unique across this memory's threads: a thread forgotten and seen again never matches old reads. */
  private nextEpoch = 1;

  /** Notes the thread's context size; returns its current epoch. */
  observe(thread: ThreadState): number {
    let t = this.threads.get(thread.id);
    if (t) this.threads.delete(thread.id);
    if (!t || thread.contextTokens < t.contextTokens) t = { contextTokens: thread.contextTokens, epoch: this.nextEpoch++ };
    else t.contextTokens = thread.contextTokens;
    this.threads.set(thread.id, t);
    evict(this.threads, READ_MEMORY_LIMITS.threads);
    return t.epoch;
  }

  /**
   * Whether the thread read this range of the file, with this content, recently enough that it is
   * still in its context. A yes uses the read up (see the class comment).
   */
  seen(thread: ThreadState, path: string, range: string, hash: string): boolean {
    const epoch = this.observe(thread);
    const entry = this.files.get(key(thread.id, path));
    if (!entry || entry.hash !== hash || entry.epoch !== epoch) return false;
    const at = entry.ranges.get(range);
    if (at === undefined) return false;
    entry.ranges.delete(range);
    const age = thread.messageCount - at;
    return age >= 0 && age <= READ_MEMORY_LIMITS.maxAgeMessages;
  }

  /** Records that the thread is being sent this range of the file. */
  remember(thread: ThreadState, path: string, range: string, hash: string): void {
    const epoch = this.observe(thread);
    const k = key(thread.id, path);
    let entry = this.files.get(k);
    if (entry) this.files.delete(k);
    if (!entry || entry.hash !== hash || entry.epoch !== epoch) entry = { hash, epoch, ranges: new Map() };
    entry.ranges.delete(range);
    entry.ranges.set(range, thread.messageCount);
    evict(entry.ranges, READ_MEMORY_LIMITS.rangesPerFile);
    this.files.set(k, entry);
    evict(this.files, READ_MEMORY_LIMITS.files);
  }

  /** The thread wrote the file: whatever it read of it before is not what the file holds. */
  forget(threadId: string, path: string): void {
    this.files.delete(key(threadId, path));
  }

  /** Entries held (for tests: the memory stays bounded). */
  get size(): { files: number; threads: number } {
    return { files: this.files.size, threads: this.threads.size };
  }
}

export function contentHash(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('base64');
}

const key = (threadId: string, path: string): string => `${threadId}\0${path}`;

function evict<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) map.delete(map.keys().next().value as K);
}

/** One memory per tool set (keyed by its shared environment object), so sessions don't share reads. */
const memories = new WeakMap<object, ReadMemory>();

export function readMemoryOf(env: object): ReadMemory {
  let memory = memories.get(env);
  if (!memory) memories.set(env, (memory = new ReadMemory()));
  return memory;
}
