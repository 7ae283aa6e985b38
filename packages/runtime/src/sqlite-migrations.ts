import type Database from 'better-sqlite3';
import { StoreError } from './errors.js';
import { SCHEMA } from './sqlite-schema.js';

/**
 * The store's format, in SQLite's user_version. 0: a new file, or a store from before versions
 * (one pending call per thread, as an object with its dispatched mark in its own column).
 * 2: a thread's pending calls are a JSON array (a reply's batch), and completions are logged.
 * 3: messages may hold thinking blocks, sent back byte for byte (an older version would lose
 * them), and a summary records when its thread switched to it (summaries.applied_at).
 * 4: a summary may keep the latest turns verbatim after it (summaries.keep_from); an older
 * version would show the summary without them, and without the user's messages kept with it.
 */
export const SCHEMA_VERSION = 4;

/**
 * Brings the database up to SCHEMA_VERSION in one transaction. A store from a newer version is
 * refused: this program would misread what it doesn't know, in the user's own repository.
 */
export function migrate(db: Database.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new StoreError(
      `The session store ${path} was written by a newer Infinity Code (store version ${version}; this one ` +
        `reads up to ${SCHEMA_VERSION}). Update infinity-code, or move ${path} aside to start a new store.`,
    );
  }
  // One transaction: statement by statement, a new file took a commit (WAL frames, locks) per table
  // and index, before the first model request.
  db.transaction(() => {
    db.exec(SCHEMA);
    if (version === SCHEMA_VERSION) return;
    if (version < 2) {
      db.exec(
        `UPDATE threads SET pending_call = json_array(json_set(pending_call, '$.dispatched',
           json(CASE dispatched WHEN 1 THEN 'true' ELSE 'false' END))), dispatched = 0
         WHERE pending_call IS NOT NULL AND json_type(pending_call) = 'object'`,
      );
    }
    const columns = db.pragma('table_info(summaries)') as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'applied_at')) {
      // Before version 3 a summary applied as soon as it was stored; none had thinking to keep.
      db.exec('ALTER TABLE summaries ADD COLUMN applied_at INTEGER; UPDATE summaries SET applied_at = up_to');
    }
    if (!columns.some((c) => c.name === 'keep_from')) {
      // NULL: older summaries keep nothing and stay shown exactly as before (turns made after
      // them hold thinking bound to those bytes).
      db.exec('ALTER TABLE summaries ADD COLUMN keep_from INTEGER');
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  })();
}
