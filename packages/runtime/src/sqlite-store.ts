import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { InputBody, InputMessage } from './input.js';
import type { HistoryMessage } from './messages.js';
import { StoreError } from './errors.js';
import { GroupCommitter } from './group-commit.js';
import type { LoadedThread, PendingCall, RuntimeStore, SliceCommit, ThreadRecord } from './store.js';
import { SCHEMA } from './sqlite-schema.js';

/** Recently used threads' integer id and counters, so writes skip the lookup by uid. */
const KNOWN_LIMIT = 8192;
interface Known {
  id: number;
  messages: number;
}

interface ThreadRow {
  id: number;
  uid: string;
  stack: string;
  status: 'open' | 'closed';
  message_count: number;
  pending_call: string | null;
  dispatched: number;
  completions: number;
  in_tok: number;
  out_tok: number;
  cache_w: number;
  cache_r: number;
  context_tokens: number;
}

export interface SqliteStoreOptions {
  /** Path of the database file; created (with its directory) if missing. */
  path: string;
}

/** RuntimeStore on one SQLite file (WAL, prepared statements, group commit). */
export class SqliteStore implements RuntimeStore {
  private readonly db: Database.Database;
  private readonly committer: GroupCommitter;
  private readonly stmt;
  private readonly known = new Map<string, Known>();

  constructor(opts: SqliteStoreOptions) {
    try {
      mkdirSync(dirname(opts.path), { recursive: true });
      this.db = new Database(opts.path);
      // Takes effect on a new file only. A commit row (~1-3 KB) fits several to a page, where 4 KB
      // pages left most of each page empty; measured ~2.5x faster inserts.
      this.db.pragma('page_size = 16384');
      this.db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode survives a process crash (our failure model); only an OS crash or
      // power loss can drop the last commits.
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 5000');
      this.db.exec(SCHEMA);
    } catch (err) {
      throw new StoreError(
        `Cannot open the session store at ${opts.path}: ${(err as Error).message}. ` +
          'Check that the directory is writable and no other program holds the file.',
        { cause: err },
      );
    }
    // A failed group is rolled back, so counters cached by its operations may be wrong.
    this.committer = new GroupCommitter(this.db, () => this.known.clear());
    const db = this.db;
    this.stmt = {
      threadByUid: db.prepare<[string], ThreadRow>('SELECT * FROM threads WHERE uid = ?'),
      threadIdByUid: db.prepare<[string], { id: number; message_count: number }>(
        'SELECT id, message_count FROM threads WHERE uid = ?',
      ),
      insertRoot: db.prepare<[string, string]>(
        'INSERT OR IGNORE INTO threads (uid, stack) VALUES (?, ?)',
      ),
      messages: db
        .prepare<[number], string>('SELECT data FROM messages WHERE thread = ? ORDER BY id')
        .pluck(),
      insertMessage: db.prepare<[number, string]>('INSERT INTO messages (thread, data) VALUES (?, ?)'),
      enqueue: db.prepare<[number, string, string]>(
        'INSERT OR IGNORE INTO inputs (thread, input_id, body) VALUES (?, ?, ?)',
      ),
      markProcessed: db.prepare<[number, string]>(
        'INSERT INTO inputs (thread, input_id, body) VALUES (?, ?, NULL) ' +
          'ON CONFLICT (thread, input_id) DO UPDATE SET body = NULL',
      ),
      isProcessed: db
        .prepare<[number, string], number>(
          'SELECT 1 FROM inputs WHERE thread = ? AND input_id = ? AND body IS NULL',
        )
        .pluck(),
      pendingInputs: db.prepare<[], { input_id: string; uid: string; body: string }>(
        'SELECT i.input_id, t.uid, i.body FROM inputs i JOIN threads t ON t.id = i.thread ' +
          'WHERE i.body IS NOT NULL ORDER BY i.id',
      ),
      updateThread: db.prepare(
        `UPDATE threads SET message_count = @message_count, pending_call = @pending_call,
           dispatched = @dispatched, completions = completions + @completions,
           in_tok = in_tok + @in_tok, out_tok = out_tok + @out_tok, cache_w = cache_w + @cache_w,
           cache_r = cache_r + @cache_r, context_tokens = @context_tokens
         WHERE id = @id`,
      ),
      markDispatched: db.prepare<[number, string]>(
        "UPDATE threads SET dispatched = 1 WHERE id = ? AND json_extract(pending_call, '$.id') = ?",
      ),
      pendingCalls: db.prepare<[], { uid: string; pending_call: string; dispatched: number }>(
        'SELECT uid, pending_call, dispatched FROM threads WHERE pending_call IS NOT NULL',
      ),
    };
  }

  async loadThread(threadId: string): Promise<LoadedThread | undefined> {
    const row = this.stmt.threadByUid.get(threadId);
    if (!row) return undefined;
    const rows = this.stmt.messages.all(row.id);
    const history: HistoryMessage[] = [];
    for (const data of rows) for (const m of JSON.parse(data) as HistoryMessage[]) history.push(m);
    this.remember(row.uid, { id: row.id, messages: row.message_count });
    return { record: toRecord(row), history };
  }

  async threadExists(threadId: string): Promise<boolean> {
    return this.lookup(threadId) !== undefined;
  }

  async ensureRootThread(threadId: string): Promise<void> {
    await this.committer.run(() => this.stmt.insertRoot.run(threadId, JSON.stringify([threadId])));
  }

  async processedIds(threadId: string, ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    const t = this.lookup(threadId);
    if (!t) return out;
    for (const id of ids) if (this.stmt.isProcessed.get(t.id, id) !== undefined) out.add(id);
    return out;
  }

  async markDispatched(threadId: string, callId: string): Promise<void> {
    await this.committer.run(() => {
      const t = this.lookup(threadId);
      if (t) this.stmt.markDispatched.run(t.id, callId);
    });
  }

  async threadsWithPendingCalls(): Promise<Array<{ threadId: string; call: PendingCall }>> {
    return this.stmt.pendingCalls.all().map((r) => ({
      threadId: r.uid,
      call: { ...(JSON.parse(r.pending_call) as Omit<PendingCall, 'dispatched'>), dispatched: r.dispatched === 1 },
    }));
  }

  enqueue(inputs: readonly InputMessage[]): Promise<boolean[]> {
    return this.committer.run(() =>
      inputs.map((input) => {
        let t = this.lookup(input.threadId);
        if (!t) {
          if (input.body.kind !== 'user_text') return false;
          t = this.createRoot(input.threadId);
        }
        return this.stmt.enqueue.run(t.id, input.id, JSON.stringify(input.body)).changes === 1;
      }),
    );
  }

  async pendingInputs(): Promise<InputMessage[]> {
    return this.stmt.pendingInputs.all().map((r) => ({
      id: r.input_id,
      threadId: r.uid,
      body: JSON.parse(r.body) as InputBody,
    }));
  }

  commit(c: SliceCommit): Promise<void> {
    return this.committer.run(() => {
      const t = this.lookup(c.threadId) ?? this.createRoot(c.threadId);
      if (c.append.length > 0) {
        this.stmt.insertMessage.run(t.id, JSON.stringify(c.append));
        t.messages += c.append.length;
      }
      for (const id of c.consumed) this.stmt.markProcessed.run(t.id, id);
      const call = c.pendingCall;
      this.stmt.updateThread.run({
        id: t.id,
        message_count: t.messages,
        pending_call: call ? JSON.stringify({ id: call.id, name: call.name, input: call.input }) : null,
        dispatched: call?.dispatched ? 1 : 0,
        completions: c.completions,
        in_tok: c.usage.input_tokens,
        out_tok: c.usage.output_tokens,
        cache_w: c.usage.cache_creation_input_tokens,
        cache_r: c.usage.cache_read_input_tokens,
        context_tokens: c.contextTokens,
      });
    });
  }

  async close(): Promise<void> {
    await this.committer.drained();
    if (this.db.open) this.db.close();
  }

  private lookup(uid: string): Known | undefined {
    const hit = this.known.get(uid);
    if (hit) return hit;
    const row = this.stmt.threadIdByUid.get(uid);
    if (!row) return undefined;
    return this.remember(uid, { id: row.id, messages: row.message_count });
  }

  private createRoot(uid: string): Known {
    this.stmt.insertRoot.run(uid, JSON.stringify([uid]));
    return this.lookup(uid)!;
  }

  private remember(uid: string, k: Known): Known {
    this.known.delete(uid);
    this.known.set(uid, k);
    if (this.known.size > KNOWN_LIMIT) this.known.delete(this.known.keys().next().value!);
    return k;
  }
}

function toRecord(row: ThreadRow): ThreadRecord {
  return {
    id: row.uid,
    stack: JSON.parse(row.stack) as string[],
    status: row.status,
    pendingCall: row.pending_call
      ? { ...(JSON.parse(row.pending_call) as Omit<PendingCall, 'dispatched'>), dispatched: row.dispatched === 1 }
      : null,
    completions: row.completions,
    usage: {
      input_tokens: row.in_tok,
      output_tokens: row.out_tok,
      cache_creation_input_tokens: row.cache_w,
      cache_read_input_tokens: row.cache_r,
    },
    contextTokens: row.context_tokens,
    messageCount: row.message_count,
  };
}
