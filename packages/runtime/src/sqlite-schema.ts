// Schema of the session store. Idempotent: run on every open, by migrate() (sqlite-migrations.ts).
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS threads (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  stack TEXT NOT NULL,
  root TEXT NOT NULL,
  kind TEXT NOT NULL DEFAULT 'root',
  parent INTEGER,
  spawn_call TEXT,
  cutoff INTEGER NOT NULL DEFAULT 0,
  parent_summaries INTEGER NOT NULL DEFAULT 0,
  summary_count INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'open',
  message_count INTEGER NOT NULL DEFAULT 0,
  -- The latest reply's calls while any waits for its result (JSON array, each with its own
  -- dispatched mark). Stores before version 2 held one call object here, marked in the next
  -- column, which is now unused (see sqlite-migrations.ts).
  pending_call TEXT,
  dispatched INTEGER NOT NULL DEFAULT 0,
  subs TEXT,
  has_deferred INTEGER NOT NULL DEFAULT 0,
  compacting INTEGER NOT NULL DEFAULT 0,
  completions INTEGER NOT NULL DEFAULT 0,
  in_tok INTEGER NOT NULL DEFAULT 0,
  out_tok INTEGER NOT NULL DEFAULT 0,
  cache_w INTEGER NOT NULL DEFAULT 0,
  cache_r INTEGER NOT NULL DEFAULT 0,
  context_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS threads_root ON threads (root, status);
CREATE INDEX IF NOT EXISTS threads_pending_call ON threads (id) WHERE pending_call IS NOT NULL;
-- One row per commit: a JSON array of the messages it appended, in order. Rows get increasing
-- rowids, so concurrent threads' commits append to the same few pages instead of rewriting one
-- page per thread (measured ~6x cheaper per commit); the index finds one thread's rows.
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY,
  thread INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_thread ON messages (thread, id);
-- One row per input ever enqueued or processed: body holds a queued input, NULL once processed.
-- The unique key is what makes delivery idempotent.
CREATE TABLE IF NOT EXISTS inputs (
  id INTEGER PRIMARY KEY,
  thread INTEGER NOT NULL,
  input_id TEXT NOT NULL,
  body TEXT,
  UNIQUE (thread, input_id)
);
CREATE INDEX IF NOT EXISTS inputs_pending ON inputs (thread, id) WHERE body IS NOT NULL;
CREATE TABLE IF NOT EXISTS summaries (
  id INTEGER PRIMARY KEY,
  thread INTEGER NOT NULL,
  up_to INTEGER NOT NULL,
  text TEXT NOT NULL,
  -- The thread's message count when it switched to this summary; NULL until then (store.ts).
  applied_at INTEGER,
  -- Own messages from here on stay verbatim after the summary; NULL in summaries from before
  -- version 4, which keep none (store.ts, CompactionSummary.keepFrom).
  keep_from INTEGER
);
CREATE INDEX IF NOT EXISTS summaries_thread ON summaries (thread, id);
-- Durable wake-ups: one scheduler reads the earliest; no timer per thread in memory.
CREATE TABLE IF NOT EXISTS timers (
  thread INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  due_at INTEGER NOT NULL,
  PRIMARY KEY (thread, call_id)
);
CREATE INDEX IF NOT EXISTS timers_due ON timers (due_at);
-- One row per completion with the model that ran it, for per-model usage and cost (the threads'
-- columns keep the totals). Written in the commit that stores the completion's turn.
CREATE TABLE IF NOT EXISTS completions (
  id INTEGER PRIMARY KEY,
  thread INTEGER NOT NULL,
  model TEXT NOT NULL,
  in_tok INTEGER NOT NULL,
  out_tok INTEGER NOT NULL,
  cache_w INTEGER NOT NULL,
  cache_r INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS completions_thread ON completions (thread);
`;
