// The schema the release before store versions wrote (store version 0), kept verbatim so a test
// can open a store written by it. Not part of the package's build.
export const SCHEMA_V0 = `
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
  text TEXT NOT NULL
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
`;
