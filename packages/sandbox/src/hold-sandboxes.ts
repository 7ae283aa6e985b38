import { SandboxError } from './errors.js';
import type { RwLock } from './rw-lock.js';
import type { Sandbox } from './sandbox.js';

function abortedError(): SandboxError {
  return new SandboxError(
    'aborted',
    'The base refresh was cancelled while it waited for commands running in sandboxes to end; nothing changed. ' +
      'Refresh again once they have finished (or cancel them first).',
  );
}

function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedError());
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

function lockAll<T>(sandboxes: readonly Sandbox[], fn: () => Promise<T>): Promise<T> {
  const [first, ...rest] = sandboxes;
  return first ? first.lock.exclusive(() => lockAll(rest, fn)) : fn();
}

/**
 * Runs `fn` with the session's structure lock (no sandbox is being created) and every live
 * sandbox's lock held exclusively (no file operation, command start or diff in flight), and,
 * when `idle`, with no command running in any of them. Commands are waited for with nothing
 * held, so the sandboxes stay usable meanwhile; if one starts again before all are idle at
 * once, the wait repeats. Locks are taken in one order (structure, then sandboxes by storage
 * name), the same as create() takes its two. Aborting `signal` ends a wait with 'aborted'.
 */
export async function holdSandboxes<T>(
  structure: RwLock,
  list: () => Sandbox[],
  idle: boolean,
  signal: AbortSignal | undefined,
  fn: (sandboxes: Sandbox[]) => Promise<T>,
): Promise<T> {
  for (;;) {
    if (signal?.aborted) throw abortedError();
    type Outcome = { kind: 'busy'; busy: Sandbox[] } | { kind: 'done'; value: T };
    const outcome = await structure.exclusive(async (): Promise<Outcome> => {
      const sandboxes = list().sort((a, b) => Number(a.key.slice(1)) - Number(b.key.slice(1)));
      return lockAll(sandboxes, async (): Promise<Outcome> => {
        // A discard may have finished while we waited for its lock.
        const live = sandboxes.filter((sb) => !sb.isDiscarded);
        const busy = idle ? live.filter((sb) => sb.busy) : [];
        if (busy.length > 0) return { kind: 'busy', busy };
        return { kind: 'done', value: await fn(live) };
      });
    });
    if (outcome.kind === 'done') return outcome.value;
    await abortable(Promise.all(outcome.busy.map((sb) => sb.whenIdle())), signal);
  }
}
