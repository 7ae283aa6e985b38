// The TUI draws its first frame before the runtime loads: SQLite, the store and the agent system
// arrive with the session (agent-session, imported beside the UI), not in front of the prompt.
// Read from the built bundle: what cli.bundle.js, the TUI's entry (run-tui) and the UI itself
// (tui/index) load as soon as they load, mapped back to their sources.
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dynamicImport, sourcesOf, staticClosure } from './support/bundle-files.js';
import { BIN } from './support/cli.js';

const DIST = dirname(BIN);
/** SQLite's JavaScript, the store and the agent system: ~120 KB to read and run. */
const RUNTIME = /[\\/]better-sqlite3[\\/]|[\\/]runtime[\\/]src[\\/](sqlite-store|local-system|slice)\.ts$/;

const sources = (files: string[]): string[] => files.flatMap((f) => sourcesOf(pathToFileURL(f).href));

describe("the modules in front of the TUI's first frame", () => {
  it('hold nothing of SQLite, the store or the agent system, which come with the session', () => {
    const main = join(DIST, 'cli.bundle.js');
    const runTui = dynamicImport(main, 'run-tui');
    const ui = dynamicImport(runTui, 'tui');
    const first = [main, runTui, ui].flatMap(staticClosure);
    expect(sources(first).filter((s) => RUNTIME.test(s))).toEqual([]);
    // Guards the check: the session's own chunk, loaded beside the UI, holds them.
    const session = dynamicImport(runTui, 'agent-session');
    expect(sources(staticClosure(session)).filter((s) => RUNTIME.test(s)).length).toBeGreaterThanOrEqual(4);
  });
});
