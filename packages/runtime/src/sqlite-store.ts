/* eslint-disable @typescript-eslint/require-await -- the store interface is async for stores that wait on I/O; this one answers at once (better-sqlite3 and memory are synchronous), and async keeps a thrown error a rejection. */
import type Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreError } from './errors.js';
import { GroupCommitter } from './group-commit.js';
import { buildView, type ViewSource } from './history-view.js';
import type { InputBody, InputMessage } from './input.js';
import type { HistoryMessage } from './messages.js';
import { migrate } from './sqlite-migrations.js';
import { openDatabase } from './sqlite-module.js';
import type {
  CompactionSummary,
  LoadedThread,
  NewThread,
  PendingCall,
  RootFilter,
  RuntimeStore,
  SliceCommit,
  Subscription,
  ThreadKind,
  ThreadRecord,
  ThreadUsage,
  Timer,
} from './store.js';
import { threadUsage, type ModelTotals } from './thread-usage.js';

/** A RootFilter's condition: `@roots` is its JSON array, or NULL for all threads. */
const IN_ROOTS = '(@roots IS NULL OR root IN (SELECT value FROM json_each(@roots)))';

/** The `@roots` parameter of a statement with IN_ROOTS. */
type Roots = { roots: string | null };

function rootsParam(roots: RootFilter): Roots {
  return { roots: roots === undefined ? null : JSON.stringify(roots) };
}

/** Recently used threads' integer id and message count, so writes skip the lookup by uid. */
const KNOWN_LIMIT = 8192;
interface Known {
  id: number;
  messages: number;
}

export interface SqliteStoreOptions {
  /** Path of the database file; created (with its directory) if missing. */
  path: string;
}

/** RuntimeStore on one SQLite file (WAL, prepared statements, group commit). */
export class SqliteStore implements RuntimeStore {
  private readonly db: Database.Database;
  private readonly committer: GroupCommitter;
  private readonly stmt: ReturnType<typeof threadStatements>;
  private readonly known = new Map<string, Known>();
  private readonly source: ViewSource;

  /** The database file. */
  get path(): string {
    return this.db.name;
  }

  constructor(opts: SqliteStoreOptions) {
    try {
      mkdirSync(dirname(opts.path), { recursive: true });
      this.db = openDatabase(opts.path);
      // Takes effect on a new file only. A commit row (~1-3 KB) fits several to a page, where 4 KB
      // pages left most of each page empty; measured ~2.5x faster inserts.
      this.db.pragma('page_size = 16384');
      this.db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode survives a process crash (our failure model); only an OS crash or
      // power loss can drop the last commits.
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 5000');
      migrate(this.db, opts.path);
    } catch (err) {
      if (err instanceof StoreError) throw err;
      throw new StoreError(
        `Cannot open the session store at ${opts.path}: ${(err as Error).message}. ` +
          'Check that the directory is writable and no other program holds the file.',
        { cause: err },
      );
    }
    // A failed group is rolled back, so counters cached by its operations may be wrong.
    this.committer = new GroupCommitter(this.db, () => this.known.clear());
    this.stmt = threadStatements(this.db);
    this.source = {
      thread: (uid) => {
        const row = this.stmt.viewInfo.get(uid);
        return row && {
          stack: JSON.parse(row.stack) as string[],
          kind: row.kind as ThreadKind,
          parentId: row.parent_uid,
          spawnCallId: row.spawn_call,
          cutoff: row.cutoff,
          parentSummaries: row.parent_summaries,
        };
      },
      ownMessages: (uid) => {
        const t = this.lookup(uid);
        return t ? this.ownMessages(t.id) : [];
      },
      summaries: (uid) => {
        const t = this.lookup(uid);
        return t
          ? this.stmt.summaries.all(t.id).map((r) => ({
              upTo: r.up_to,
              text: r.text,
              ...(r.keep_from !== null && { keepFrom: r.keep_from }),
              ...(r.applied_at !== null && { appliedAt: r.applied_at }),
            }))
          : [];
      },
    };
  }

  async loadThread(threadId: string): Promise<LoadedThread | undefined> {
    const row = this.stmt.threadByUid.get(threadId);
    if (!row) return undefined;
    this.remember(row.uid, { id: row.id, messages: row.message_count });
    const record = toRecord(row, this.stmt.uidById);
    if (row.parent === null && row.summary_count === 0) {
      // The common case (a root, never compacted) needs none of the view machinery.
      return { record, history: this.ownMessages(row.id), ownOffset: 0, ownFrom: 0 };
    }
    return { record, ...buildView(this.source, threadId) };
  }

  async threadRecord(threadId: string): Promise<ThreadRecord | undefined> {
    const row = this.stmt.threadByUid.get(threadId);
    return row && toRecord(row, this.stmt.uidById);
  }

  async threadExists(threadId: string): Promise<boolean> {
    return this.lookup(threadId) !== undefined;
  }

  async ensureRootThread(threadId: string): Promise<void> {
    await this.committer.run(() => this.lookup(threadId) ?? this.createRoot(threadId));
  }

  createThread(spec: NewThread): Promise<void> {
    return this.committer.run(() => {
      if (this.lookup(spec.id)) return;
      const parent = this.stmt.threadByUid.get(spec.parentId);
      if (!parent) throw new StoreError(`parent thread ${spec.parentId} does not exist`);
      this.stmt.insertChild.run({
        uid: spec.id,
        stack: JSON.stringify([...(JSON.parse(parent.stack) as string[]), spec.id]),
        root: parent.root,
        kind: spec.kind,
        parent: parent.id,
        spawn_call: spec.spawnCallId,
        cutoff: spec.cutoff,
        parent_summaries: parent.summary_count,
        message_count: spec.seed.length,
        pending_call: batchJson(spec.batch),
        dispatched: 0,
      });
      const t = this.lookup(spec.id)!;
      if (spec.seed.length > 0) this.stmt.insertMessage.run(t.id, JSON.stringify(spec.seed));
    });
  }

  applySummary(threadId: string): Promise<void> {
    return this.committer.run(() => {
      const t = this.lookup(threadId);
      if (t) this.stmt.applySummary.run(t.id);
    });
  }

  saveSummary(threadId: string, summary: Pick<CompactionSummary, 'upTo' | 'text' | 'keepFrom'>): Promise<void> {
    return this.committer.run(() => {
      const t = this.lookup(threadId);
      if (!t) return;
      this.stmt.insertSummary.run(t.id, summary.upTo, summary.text, summary.keepFrom ?? null);
      this.stmt.bumpSummaries.run(t.id);
    });
  }

  closeThread(threadId: string): Promise<void> {
    return this.committer.run(() => {
      this.stmt.closeThread.run(threadId);
    });
  }

  async countOpenThreads(rootId: string): Promise<number> {
    return this.stmt.countOpen.get(rootId) ?? 0;
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
      const row = t && this.stmt.batchOf.get(t.id);
      if (!t || !row) return;
      const batch = parseBatch(row.pending_call);
      const call = batch.find((c) => c.id === callId);
      if (!call || call.dispatched) return;
      call.dispatched = true;
      this.stmt.setBatch.run(batchJson(batch), t.id);
    });
  }

  async threadsWithPendingCalls(roots?: RootFilter): Promise<Array<{ threadId: string; call: PendingCall }>> {
    return this.stmt.pendingCalls.all(rootsParam(roots)).flatMap((r) =>
      parseBatch(r.pending_call)
        .filter((call) => call.result === undefined)
        .map((call) => ({ threadId: r.uid, call })),
    );
  }

  async activeSubscriptions(roots?: RootFilter): Promise<Array<{ thread: ThreadRecord; subscription: Subscription }>> {
    return this.stmt.withSubscriptions.all(rootsParam(roots)).flatMap((row) => {
      const thread = toRecord(row, this.stmt.uidById);
      return thread.subscriptions.map((subscription) => ({ thread, subscription }));
    });
  }

  addTimer(timer: Timer): Promise<void> {
    return this.committer.run(() => {
      const t = this.lookup(timer.threadId);
      if (t) this.stmt.insertTimer.run(t.id, timer.callId, timer.dueAt);
    });
  }

  async nextTimer(roots?: RootFilter): Promise<Timer | undefined> {
    const r = this.stmt.nextTimer.get(rootsParam(roots));
    return r && { threadId: r.uid, callId: r.call_id, dueAt: r.due_at };
  }

  fireTimers(now: number, result: (t: Timer) => InputMessage, roots?: RootFilter): Promise<InputMessage[]> {
    return this.committer.run(() => {
      const due = this.stmt.dueTimers.all({ now, ...rootsParam(roots) });
      const fired: InputMessage[] = [];
      for (const r of due) {
        const input = result({ threadId: r.uid, callId: r.call_id, dueAt: r.due_at });
        if (this.stmt.enqueue.run(r.thread, input.id, JSON.stringify(input.body)).changes === 1) fired.push(input);
        this.stmt.deleteTimer.run(r.thread, r.call_id);
      }
      return fired;
    });
  }

  enqueue(inputs: readonly InputMessage[]): Promise<boolean[]> {
    return this.committer.run(() => inputs.map((input) => this.enqueueNow(input)));
  }

  async pendingInputs(roots?: RootFilter): Promise<InputMessage[]> {
    return this.stmt.pendingInputs.all(rootsParam(roots)).map(toInput);
  }

  async pendingInputsFor(threadId: string): Promise<InputMessage[]> {
    const t = this.lookup(threadId);
    return t ? this.stmt.pendingInputsFor.all(t.id).map((r) => toInput({ ...r, uid: threadId })) : [];
  }

  commit(c: SliceCommit): Promise<void> {
    return this.committer.run(() => {
      const t = this.lookup(c.threadId) ?? this.createRoot(c.threadId);
      for (const input of c.enqueue) this.enqueueNow(input);
      if (c.append.length > 0) {
        this.stmt.insertMessage.run(t.id, JSON.stringify(c.append));
        t.messages += c.append.length;
      }
      for (const id of c.consumed) this.stmt.markProcessed.run(t.id, id);
      this.stmt.updateThread.run({
        id: t.id,
        message_count: t.messages,
        pending_call: batchJson(c.batch),
        dispatched: 0,
        subs: c.subscriptions.length > 0 ? JSON.stringify(c.subscriptions) : null,
        has_deferred: c.hasDeferred ? 1 : 0,
        compacting: c.compacting ? 1 : 0,
        completions: c.completions,
        in_tok: c.usage.input_tokens,
        out_tok: c.usage.output_tokens,
        cache_w: c.usage.cache_creation_input_tokens,
        cache_r: c.usage.cache_read_input_tokens,
        context_tokens: c.contextTokens,
      });
      if (c.completionUsage) {
        for (const { model, usage: u } of c.completionUsage) {
          this.stmt.insertCompletion.run(
            t.id, model, u.input_tokens, u.output_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens,
          );
        }
      }
    });
  }

  async usageByThread(rootId: string): Promise<ThreadUsage[]> {
    const perModel = new Map<string, ModelTotals[]>();
    for (const r of this.stmt.usageByModel.all(rootId)) {
      let list = perModel.get(r.uid);
      if (!list) perModel.set(r.uid, (list = []));
      list.push({ model: r.model, completions: r.n, usage: usageOf(r) });
    }
    const threads = this.stmt.threadTotals.all(rootId).map((r) => ({
      threadId: r.uid,
      kind: r.kind as ThreadKind,
      completions: r.completions,
      usage: usageOf(r),
    }));
    return threadUsage(threads, perModel);
  }

  async close(): Promise<void> {
    await this.committer.drained();
    if (this.db.open) this.db.close();
  }

  private enqueueNow(input: InputMessage): boolean {
    let t = this.lookup(input.threadId);
    if (!t) {
      if (input.body.kind !== 'user_text') return false;
      t = this.createRoot(input.threadId);
    }
    return this.stmt.enqueue.run(t.id, input.id, JSON.stringify(input.body)).changes === 1;
  }

  private ownMessages(id: number): HistoryMessage[] {
    const history: HistoryMessage[] = [];
    for (const data of this.stmt.messages.all(id)) for (const m of JSON.parse(data) as HistoryMessage[]) history.push(m);
    return history;
  }

  private lookup(uid: string): Known | undefined {
    const hit = this.known.get(uid);
    if (hit) return hit;
    const row = this.stmt.threadIdByUid.get(uid);
    if (!row) return undefined;
    return this.remember(uid, { id: row.id, messages: row.message_count });
  }

  private createRoot(uid: string): Known {
    this.stmt.insertRoot.run(uid, JSON.stringify([uid]), uid);
    return this.lookup(uid)!;
  }

  private remember(uid: string, k: Known): Known {
    this.known.delete(uid);
    this.known.set(uid, k);
    if (this.known.size > KNOWN_LIMIT) this.known.delete(this.known.keys().next().value!);
    return k;
  }
}

function batchJson(batch: readonly PendingCall[]): string | null {
  return batch.length > 0 ? JSON.stringify(batch) : null;
}

function parseBatch(json: string | null): PendingCall[] {
  return json ? (JSON.parse(json) as PendingCall[]) : [];
}

function toInput(r: { input_id: string; uid: string; body: string }): InputMessage {
  return { id: r.input_id, threadId: r.uid, body: JSON.parse(r.body) as InputBody };
}

function usageOf(r: { in_tok: number; out_tok: number; cache_w: number; cache_r: number }) {
  return {
    input_tokens: r.in_tok,
    output_tokens: r.out_tok,
    cache_creation_input_tokens: r.cache_w,
    cache_read_input_tokens: r.cache_r,
  };
}

function toRecord(row: ThreadRow, uidById: { get(id: number): string | undefined }): ThreadRecord {
  return {
    id: row.uid,
    stack: JSON.parse(row.stack) as string[],
    kind: row.kind as ThreadKind,
    parentId: row.parent === null ? null : (uidById.get(row.parent) ?? null),
    spawnCallId: row.spawn_call,
    cutoff: row.cutoff,
    status: row.status,
    subscriptions: row.subs ? (JSON.parse(row.subs) as Subscription[]) : [],
    hasDeferred: row.has_deferred === 1,
    compacting: row.compacting === 1,
    batch: parseBatch(row.pending_call),
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

interface UsageRow {
  in_tok: number;
  out_tok: number;
  cache_w: number;
  cache_r: number;
}

interface ThreadRow {
  id: number;
  uid: string;
  stack: string;
  kind: string;
  parent: number | null;
  spawn_call: string | null;
  cutoff: number;
  parent_summaries: number;
  summary_count: number;
  status: 'open' | 'closed';
  message_count: number;
  pending_call: string | null;
  dispatched: number;
  subs: string | null;
  has_deferred: number;
  compacting: number;
  root: string;
  completions: number;
  in_tok: number;
  out_tok: number;
  cache_w: number;
  cache_r: number;
  context_tokens: number;
}

/** Every statement the SQLite store runs, prepared once per connection. */
function threadStatements(db: Database.Database) {
  return {
    threadByUid: db.prepare<[string], ThreadRow>('SELECT * FROM threads WHERE uid = ?'),
    threadIdByUid: db.prepare<[string], { id: number; message_count: number }>(
      'SELECT id, message_count FROM threads WHERE uid = ?',
    ),
    uidById: db.prepare<[number], string>('SELECT uid FROM threads WHERE id = ?').pluck(),
    viewInfo: db.prepare<
      [string],
      { stack: string; kind: string; parent_uid: string | null; spawn_call: string | null; cutoff: number; parent_summaries: number }
    >(
      'SELECT t.stack, t.kind, p.uid AS parent_uid, t.spawn_call, t.cutoff, t.parent_summaries FROM threads t ' +
        'LEFT JOIN threads p ON p.id = t.parent WHERE t.uid = ?',
    ),
    insertRoot: db.prepare<[string, string, string]>('INSERT OR IGNORE INTO threads (uid, stack, root) VALUES (?, ?, ?)'),
    insertChild: db.prepare(
      `INSERT OR IGNORE INTO threads (uid, stack, root, kind, parent, spawn_call, cutoff, parent_summaries,
         message_count, pending_call, dispatched)
       VALUES (@uid, @stack, @root, @kind, @parent, @spawn_call, @cutoff, @parent_summaries,
         @message_count, @pending_call, @dispatched)`,
    ),
    closeThread: db.prepare<[string]>("UPDATE threads SET status = 'closed' WHERE uid = ?"),
    countOpen: db
      .prepare<[string], number>("SELECT count(*) FROM threads WHERE root = ? AND status = 'open'")
      .pluck(),
    messages: db.prepare<[number], string>('SELECT data FROM messages WHERE thread = ? ORDER BY id').pluck(),
    insertMessage: db.prepare<[number, string]>('INSERT INTO messages (thread, data) VALUES (?, ?)'),
    summaries: db.prepare<[number], { up_to: number; text: string; keep_from: number | null; applied_at: number | null }>(
      'SELECT up_to, text, keep_from, applied_at FROM summaries WHERE thread = ? ORDER BY id',
    ),
    insertSummary: db.prepare<[number, number, string, number | null]>(
      'INSERT INTO summaries (thread, up_to, text, keep_from) VALUES (?, ?, ?, ?)',
    ),
    applySummary: db.prepare<[number]>(
      `UPDATE summaries SET applied_at = (SELECT message_count FROM threads WHERE id = summaries.thread)
       WHERE id = (SELECT max(id) FROM summaries s WHERE s.thread = ?) AND applied_at IS NULL`,
    ),
    bumpSummaries: db.prepare<[number]>('UPDATE threads SET summary_count = summary_count + 1 WHERE id = ?'),
    enqueue: db.prepare<[number, string, string]>(
      'INSERT OR IGNORE INTO inputs (thread, input_id, body) VALUES (?, ?, ?)',
    ),
    markProcessed: db.prepare<[number, string]>(
      'INSERT INTO inputs (thread, input_id, body) VALUES (?, ?, NULL) ' +
        'ON CONFLICT (thread, input_id) DO UPDATE SET body = NULL',
    ),
    isProcessed: db
      .prepare<[number, string], number>('SELECT 1 FROM inputs WHERE thread = ? AND input_id = ? AND body IS NULL')
      .pluck(),
    pendingInputs: db.prepare<[Roots], { input_id: string; uid: string; body: string }>(
      'SELECT i.input_id, t.uid, i.body FROM inputs i JOIN threads t ON t.id = i.thread ' +
        `WHERE i.body IS NOT NULL AND ${IN_ROOTS} ORDER BY i.id`,
    ),
    pendingInputsFor: db.prepare<[number], { input_id: string; body: string }>(
      'SELECT input_id, body FROM inputs WHERE thread = ? AND body IS NOT NULL ORDER BY id',
    ),
    updateThread: db.prepare(
      `UPDATE threads SET message_count = @message_count, pending_call = @pending_call,
         dispatched = @dispatched, subs = @subs, has_deferred = @has_deferred, compacting = @compacting,
         completions = completions + @completions,
         in_tok = in_tok + @in_tok, out_tok = out_tok + @out_tok, cache_w = cache_w + @cache_w,
         cache_r = cache_r + @cache_r, context_tokens = @context_tokens
       WHERE id = @id`,
    ),
    batchOf: db.prepare<[number], { pending_call: string | null; dispatched: number }>(
      'SELECT pending_call, dispatched FROM threads WHERE id = ?',
    ),
    setBatch: db.prepare<[string | null, number]>('UPDATE threads SET pending_call = ?, dispatched = 0 WHERE id = ?'),
    withSubscriptions: db.prepare<[Roots], ThreadRow>(`SELECT * FROM threads WHERE subs IS NOT NULL AND status = 'open' AND ${IN_ROOTS}`),
    pendingCalls: db.prepare<[Roots], { uid: string; pending_call: string; dispatched: number }>(
      `SELECT uid, pending_call, dispatched FROM threads WHERE pending_call IS NOT NULL AND status = 'open' AND ${IN_ROOTS}`,
    ),
    insertTimer: db.prepare<[number, string, number]>(
      'INSERT OR REPLACE INTO timers (thread, call_id, due_at) VALUES (?, ?, ?)',
    ),
    nextTimer: db.prepare<[Roots], { uid: string; call_id: string; due_at: number }>(
      `SELECT t.uid, x.call_id, x.due_at FROM timers x JOIN threads t ON t.id = x.thread WHERE ${IN_ROOTS} ORDER BY x.due_at LIMIT 1`,
    ),
    dueTimers: db.prepare<[Roots & { now: number }], { thread: number; uid: string; call_id: string; due_at: number }>(
      'SELECT x.thread, t.uid, x.call_id, x.due_at FROM timers x JOIN threads t ON t.id = x.thread ' +
        `WHERE x.due_at <= @now AND ${IN_ROOTS} ORDER BY x.due_at`,
    ),
    deleteTimer: db.prepare<[number, string]>('DELETE FROM timers WHERE thread = ? AND call_id = ?'),
    insertCompletion: db.prepare<[number, string, number, number, number, number]>(
      'INSERT INTO completions (thread, model, in_tok, out_tok, cache_w, cache_r) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    threadTotals: db.prepare<[string], UsageRow & { uid: string; kind: string; completions: number }>(
      'SELECT uid, kind, completions, in_tok, out_tok, cache_w, cache_r FROM threads WHERE root = ? ORDER BY id',
    ),
    usageByModel: db.prepare<[string], UsageRow & { uid: string; model: string; n: number }>(
      'SELECT t.uid, c.model, count(*) AS n, sum(c.in_tok) AS in_tok, sum(c.out_tok) AS out_tok, ' +
        'sum(c.cache_w) AS cache_w, sum(c.cache_r) AS cache_r ' +
        'FROM threads t JOIN completions c ON c.thread = t.id WHERE t.root = ? ' +
        'GROUP BY t.id, c.model ORDER BY t.id, min(c.id)',
    ),
  };
}
