import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from './errors.js';
import { SCHEMA_VERSION } from './sqlite-migrations.js';
import { SqliteStore } from './sqlite-store.js';
import { tempDir } from './test-support/harness.js';
import { SCHEMA_V0 } from './test-support/schema-v0.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function dbPath(): string {
  const dir = tempDir('ic-migrate-');
  dirs.push(dir);
  return join(dir, 'state.db');
}

describe('session store versions', () => {
  it('opens a store written before versions: its pending call becomes a one-call batch, and it keeps working', async () => {
    const path = dbPath();
    const old = new Database(path);
    old.exec(SCHEMA_V0);
    old.prepare("INSERT INTO threads (uid, stack, root, message_count, pending_call, dispatched) VALUES ('root', '[\"root\"]', 'root', 2, ?, 1)")
      .run(JSON.stringify({ id: 'toolu_1', name: 'execute_command', input: { command: 'npm test' } }));
    old.prepare("INSERT INTO messages (thread, data) VALUES (1, ?)").run(
      JSON.stringify([
        { role: 'user', content: [{ type: 'text', text: 'run the tests' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'execute_command', input: { command: 'npm test' } }] },
      ]),
    );
    old.close();

    const store = new SqliteStore({ path });
    const t = (await store.loadThread('root'))!;
    expect(t.record.batch).toEqual([{ id: 'toolu_1', name: 'execute_command', input: { command: 'npm test' }, dispatched: true }]);
    expect(await store.threadsWithPendingCalls()).toEqual([{ threadId: 'root', call: t.record.batch[0] }]);
    // Usage is logged from now on.
    await store.commit({
      threadId: 'root', append: [], consumed: [], batch: t.record.batch, subscriptions: [], hasDeferred: false,
      compacting: false, enqueue: [], completions: 1, contextTokens: 0,
      usage: { input_tokens: 5, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      completionUsage: [{ model: 'm', usage: { input_tokens: 5, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }],
    });
    expect((await store.usageByThread('root')).find((u) => u.model === 'm')?.usage.input_tokens).toBe(5);
    await store.close();
    const check = new Database(path);
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    check.close();
  });

  it('opens a version 2 store: its summaries stay in force (applied where they stand), and thinking round-trips', async () => {
    const path = dbPath();
    const old = new Database(path);
    old.exec(SCHEMA_V0);
    old.pragma('user_version = 2');
    old.prepare("INSERT INTO threads (uid, stack, root, message_count, summary_count) VALUES ('root', '[\"root\"]', 'root', 3, 1)").run();
    old.prepare('INSERT INTO messages (thread, data) VALUES (1, ?)').run(
      JSON.stringify([
        { role: 'user', content: [{ type: 'text', text: 'old question' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'old answer' }] },
        { role: 'user', content: [{ type: 'text', text: 'newer question' }] },
      ]),
    );
    old.prepare("INSERT INTO summaries (thread, up_to, text) VALUES (1, 2, 'We discussed the old question.')").run();
    old.close();

    const store = new SqliteStore({ path });
    const t = (await store.loadThread('root'))!;
    expect(JSON.stringify(t.history[0])).toContain('We discussed the old question.');
    expect(t.history.slice(1)).toEqual([{ role: 'user', content: [{ type: 'text', text: 'newer question' }] }]);
    // A thinking block is stored and read back exactly.
    const thinking = { type: 'thinking' as const, thinking: 'Notes ✓ with "quotes"\n', signature: 'c2lnbmF0dXJl+/=' };
    await store.commit({
      threadId: 'root', append: [{ role: 'assistant', content: [thinking, { type: 'text', text: 'new answer' }] }], consumed: [], batch: [],
      subscriptions: [], hasDeferred: false, compacting: false, enqueue: [], completions: 1, contextTokens: 0,
      usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, completionUsage: [],
    });
    expect((await store.loadThread('root'))!.history.at(-1)!.content[0]).toEqual(thinking);
    await store.close();
    const check = new Database(path);
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(check.prepare('SELECT up_to, applied_at FROM summaries').get()).toEqual({ up_to: 2, applied_at: 2 });
    check.close();
  });

  it('opens a version 3 store: its summaries are shown byte for byte as before, and new ones keep turns', async () => {
    const path = dbPath();
    const old = new Database(path);
    old.exec(SCHEMA_V0);
    old.exec('ALTER TABLE summaries ADD COLUMN applied_at INTEGER');
    old.pragma('user_version = 3');
    old.prepare("INSERT INTO threads (uid, stack, root, message_count, summary_count) VALUES ('root', '[\"root\"]', 'root', 4, 1)").run();
    const thinking = { type: 'thinking' as const, thinking: 'bound to the summary', signature: 'c2ln' };
    old.prepare('INSERT INTO messages (thread, data) VALUES (1, ?)').run(
      JSON.stringify([
        { role: 'user', content: [{ type: 'text', text: 'old question' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'old answer' }] },
        { role: 'user', content: [{ type: 'text', text: 'newer question' }] },
        { role: 'assistant', content: [thinking, { type: 'text', text: 'newer answer' }] },
      ]),
    );
    old.prepare("INSERT INTO summaries (thread, up_to, text, applied_at) VALUES (1, 2, 'We discussed the old question.', 2)").run();
    old.close();

    const store = new SqliteStore({ path });
    // The turn after the summary holds thinking signed against these exact bytes: no record added.
    expect((await store.loadThread('root'))!.history).toEqual([
      { role: 'user', content: [{ type: 'text', text: '[Summary of the conversation so far]\nWe discussed the old question.\n\nThread stack: ["root"]' }] },
      { role: 'user', content: [{ type: 'text', text: 'newer question' }] },
      { role: 'assistant', content: [thinking, { type: 'text', text: 'newer answer' }] },
    ]);
    await store.saveSummary('root', { upTo: 4, text: 'Two questions so far.', keepFrom: 2 });
    await store.applySummary('root');
    const [summary, ...kept] = (await store.loadThread('root'))!.history;
    expect(JSON.stringify(summary)).toContain('<user_message>\\nold question\\n</user_message>');
    expect(kept).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'newer question' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'newer answer' }] },
    ]);
    await store.close();
    const check = new Database(path);
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(check.prepare('SELECT up_to, keep_from, applied_at FROM summaries ORDER BY id').all()).toEqual([
      { up_to: 2, keep_from: null, applied_at: 2 },
      { up_to: 4, keep_from: 2, applied_at: 4 },
    ]);
    check.close();
  });

  it('a new store gets the current version', async () => {
    const path = dbPath();
    await new SqliteStore({ path }).close();
    const check = new Database(path);
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    check.close();
  });

  it('refuses a store from a newer version with a message saying what to do', async () => {
    const path = dbPath();
    await new SqliteStore({ path }).close();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    let error: unknown;
    try {
      new SqliteStore({ path });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(new RegExp(`written by a newer Infinity Code \\(store version ${SCHEMA_VERSION + 1}; this one reads up to ${SCHEMA_VERSION}\\)\\. Update infinity-code, or move .*state\\.db aside`));
  });
});
