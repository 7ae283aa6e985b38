import type { UserEditsUpdate } from './tui/index.js';
import { watchTree, type TreeWatch } from './tree-watch.js';

export interface UserEditsFeed {
  /** The latest list at once (when known), then every change. Returns the unsubscribe function. */
  subscribe(listener: (edits: UserEditsUpdate) => void): () => void;
  /** Compare again now (the base moved). */
  recheck(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The user's edits for the TUI: a watcher on the working tree whose latest word is kept, so a
 * listener that comes later (the UI attaches when the session is open) still gets it.
 */
export function userEditsFeed(o: { root: string; changed: () => Promise<string[]>; skipDirs?: readonly string[] }): UserEditsFeed {
  let latest: UserEditsUpdate | undefined;
  let listeners: Array<(edits: UserEditsUpdate) => void> = [];
  const tell = (edits: UserEditsUpdate) => {
    latest = edits;
    for (const l of listeners) l(edits);
  };
  const watch: TreeWatch = watchTree({
    root: o.root,
    changed: o.changed,
    ...(o.skipDirs ? { skipDirs: o.skipDirs } : {}),
    onChange: (paths) => tell({ paths }),
    onError: (problem) => tell({ paths: latest?.paths ?? [], problem }),
  });
  return {
    subscribe(listener) {
      listeners = [...listeners, listener];
      // The problem was said already; a late listener gets the list.
      if (latest) listener({ paths: latest.paths });
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    recheck: () => watch.recheck(),
    close: () => watch.close(),
  };
}
