import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './sqlite-module.js';
import { tempDir } from './test-support/harness.js';

describe('openDatabase', () => {
  it('opens a database file with the native binding named, without the package searching for it', () => {
    const path = join(tempDir('ic-sqlite-module-'), 'state.db');
    const db = openDatabase(path);
    db.exec('CREATE TABLE t (x TEXT)');
    db.prepare('INSERT INTO t VALUES (?)').run('kept');
    db.close();
    const again = openDatabase(path);
    expect(again.prepare('SELECT x FROM t').pluck().get()).toBe('kept');
    again.close();
    // The package's own search (the `bindings` package) never ran: it would be in the cache.
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    expect(loaded.some((f) => /better_sqlite3\.node$/.test(f))).toBe(true);
    expect(loaded.filter((f) => /[\\/]bindings[\\/]bindings\.js$/.test(f))).toEqual([]);
  });

  it('opens one through the installed package when no addon is found', () => {
    const path = join(tempDir('ic-sqlite-module-'), 'state.db');
    const db = openDatabase(path, null);
    db.exec('CREATE TABLE t (x TEXT)');
    db.prepare('INSERT INTO t VALUES (?)').run('kept');
    db.close();
    // The package searched for its addon (after the test above, which finds no such search).
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    expect(loaded.filter((f) => /[\\/]bindings[\\/]bindings\.js$/.test(f))).toHaveLength(1);
    const again = openDatabase(path);
    expect(again.prepare('SELECT x FROM t').pluck().get()).toBe('kept');
    again.close();
  });
});
