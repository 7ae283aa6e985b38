import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

// better-sqlite3 is CommonJS. Imported from an ES module, Node first parses it to find its
// exports (initialising its CommonJS lexer for that), and the package then searches for its
// native binding (the `bindings` package: a stack trace and a list of candidate paths). Loaded
// with require() and given the binding's path, a headless run reaches its first model request
// ~10 ms sooner (`pnpm bench:headless`).
const load = createRequire(import.meta.url);

/** Opens (or creates) the SQLite database at `path`. */
export function openDatabase(path: string): BetterSqlite3.Database {
  const Database = load('better-sqlite3') as typeof BetterSqlite3;
  const binding = nativeBinding();
  return new Database(path, binding === undefined ? {} : { nativeBinding: binding });
}

/**
 * Where the package's install put its compiled addon (prebuilt or built from source alike). When
 * it is elsewhere (a debug build), the package's own search finds it.
 */
function nativeBinding(): string | undefined {
  try {
    const file = join(dirname(load.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}
