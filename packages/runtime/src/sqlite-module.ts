import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

// How the store opens SQLite costs a headless run time before its first model request. The CLI's
// bundle carries better-sqlite3's JavaScript (its CommonJS files one by one took ~9 ms), and the
// database is opened with the path of the package's compiled addon: the package's own search for
// it (the `bindings` package: a stack trace, then candidate paths) would look beside the bundle.
const load = createRequire(import.meta.url);

/**
 * Opens (or creates) the SQLite database at `path`, with the compiled addon at `addon` (by default
 * the installed package's). With none found (a debug build, say), the installed package opens it
 * and finds its addon itself.
 */
export function openDatabase(path: string, addon: string | null = installedAddon()): Database.Database {
  if (addon !== null) return new Database(path, { nativeBinding: addon });
  const Installed = load('better-sqlite3') as typeof Database;
  return new Installed(path);
}

/** Where the package's install put its compiled addon, prebuilt or built from source alike. */
function installedAddon(): string | null {
  try {
    const file = join(dirname(load.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
    return existsSync(file) ? file : null;
  } catch {
    return null;
  }
}
