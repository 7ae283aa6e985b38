// What the session costs: the status line prices each completion with its own model, and /cost
// lists the stored usage per thread and model, earlier runs of the session included.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSystem, readHistory, ScriptedProvider, SqliteStore, type CompletionRequest, type ScriptedReply, type ThreadRecord } from '@infinity-code/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { Pricing } from '../pricing.js';
import { initialState, reduce, type UiState } from './state.js';
import { startRig, threadOf, type Rig } from './testing.js';

let rig: Rig | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const MTOK = 1_000_000;
const ROOT_USAGE = { input_tokens: 2000, output_tokens: 1000, cache_creation_input_tokens: 10_000, cache_read_input_tokens: 0 };
const CHILD_USAGE = { input_tokens: 30_000, output_tokens: 2000, cache_creation_input_tokens: 0, cache_read_input_tokens: 60_000 };

/** The root delegates to a child and answers once it reports; every completion reports ROOT_USAGE or CHILD_USAGE. */
function delegate(r: CompletionRequest): ScriptedReply {
  const me = threadOf(r);
  if (me.stack.length > 1) {
    return { usage: CHILD_USAGE, toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'did it' } } };
  }
  const last = readHistory(r.messages).at(-1);
  if (last?.kind === 'injected' && last.source === 'report') return { text: 'All done.', usage: ROOT_USAGE };
  if (last?.kind === 'tool') return { text: 'Waiting for the child.', usage: ROOT_USAGE };
  return { usage: ROOT_USAGE, toolCall: { name: 'spawn_thread', input: { instructions: 'do the work', child_of: me.stack } } };
}

// Opus 5.5 ($4/$20, 5-minute cache write $5) for 2000 in, 10k cache write, 1000 out: $0.078 per completion.
const ROOT_COST = (2000 * 4 + 10_000 * 5 + 1000 * 20) / MTOK;
// Haiku 5.5 with a 90K-token prompt, at its short-prompt prices ($0.10/$0.50, cache read $0.01):
// 30k in, 60k cache read, 2000 out make $0.0046 (at the long-prompt prices, $0.023).
const CHILD_COST = (30_000 * 0.1 + 60_000 * 0.01 + 2000 * 0.5) / MTOK;

const byKind = (t: ThreadRecord) => (t.kind === 'root' ? 'claude-opus-5-5' : 'claude-haiku-5-5');

describe('/cost and the status line', () => {
  it('/cost lists each thread with its model, tokens and USD, and the session total', async () => {
    rig = await startRig({ brain: delegate, model: 'claude-opus-5-5', system: { model: byKind } });
    await rig.submit('Delegate the work.');
    await rig.settle();
    await rig.submit('/cost');
    await rig.untilState((s) => s.items.some((i) => i.kind === 'notice' && i.text.startsWith('Usage of session')));
    const f = rig.frame();
    const childId = rig.events.flatMap((e) => (e.type === 'thread-spawned' ? [e.childId] : []))[0];
    expect(f).toContain('Usage of session root (USD estimated at list prices):');
    expect(f).toMatch(/thread\s+kind\s+model\s+calls\s+input\s+cache write\s+cache read\s+output\s+USD/);
    expect(f).toMatch(/root\s+root\s+claude-opus-5-5\s+3\s+6,000\s+30,000\s+0\s+3,000\s+\$0\.2340/);
    expect(f).toMatch(new RegExp(`${childId.slice(0, 8)}\\s+child\\s+claude-haiku-5-5\\s+1\\s+30,000\\s+0\\s+60,000\\s+2,000\\s+\\$0\\.0046`));
    expect(f).toMatch(/total\s+4\s+36,000\s+30,000\s+60,000\s+5,000\s+\$0\.2386/);
    // The status line agrees: each completion priced with its own model.
    expect(rig.store.getState().status.cost).toBeCloseTo(3 * ROOT_COST + CHILD_COST, 9);
    expect(f).toContain('claude-opus-5-5 · ↑126k ↓5.0k · $0.24 ·');
  });

  it("/cost reads the store: a resumed session's earlier runs count, a model without a price says n/a", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ic-cost-'));
    dirs.push(dir);
    const path = join(dir, 'state.db');
    // An earlier run of the session, on a model with no known price.
    const earlier = new LocalSystem({
      store: new SqliteStore({ path }),
      provider: new ScriptedProvider(() => ({ text: 'Hi.', usage: { input_tokens: 1234, output_tokens: 56 } })),
      model: 'local-llm',
    });
    await earlier.sendUserText('root', 'hello');
    await earlier.whenIdle();
    await earlier.close();

    rig = await startRig({
      brain: () => ({ text: 'Hello again.', usage: ROOT_USAGE }),
      model: 'claude-opus-5-5',
      system: { store: new SqliteStore({ path }) },
    });
    await rig.submit('/cost');
    await rig.untilState((s) => s.items.some((i) => i.kind === 'notice' && i.text.startsWith('Usage of session')));
    let f = rig.frame();
    expect(f).toMatch(/root\s+root\s+local-llm\s+1\s+1,234\s+0\s+0\s+56\s+n\/a/);
    expect(f).toMatch(/total\s+1\s+1,234\s+0\s+0\s+56\s+≥\$0\.0000/);
    expect(f).toContain('No price for local-llm: the total leaves it out. Set one with "prices" in your config');
    // This run started at zero on screen; its own completion is priced.
    expect(f).toContain('claude-opus-5-5 · ↑0 ↓0 · $0.00 ·');

    await rig.submit('say hello');
    await rig.settle();
    await rig.submit('/cost');
    await rig.untilState((s) => s.items.filter((i) => i.kind === 'notice' && i.text.startsWith('Usage of session')).length === 2);
    f = rig.frame();
    expect(f).toMatch(/root\s+root\s+claude-opus-5-5\s+1\s+2,000\s+10,000\s+0\s+1,000\s+\$0\.0780/);
    expect(f).toMatch(/total\s+2\s+3,234\s+10,000\s+0\s+1,056\s+≥\$0\.0780/);
  });

  it('/cost uses the prices of the config', async () => {
    rig = await startRig({
      brain: () => ({ text: 'Hi.', usage: { input_tokens: MTOK, output_tokens: MTOK } }),
      model: 'local-llm',
      pricing: new Pricing({ user: { 'local-llm': { input: 0.5, output: 1.5 } } }),
    });
    expect(rig.frame()).toContain('local-llm · ↑0 ↓0 · $0.00 ·');
    await rig.submit('hello');
    await rig.settle();
    await rig.submit('/cost');
    await rig.untilState((s) => s.items.some((i) => i.kind === 'notice' && i.text.startsWith('Usage of session')));
    expect(rig.frame()).toMatch(/root\s+root\s+local-llm\s+1\s+1,000,000\s+0\s+0\s+1,000,000\s+\$2\.00/);
    expect(rig.frame()).toContain('local-llm · ↑1.0M ↓1.0M · $2.00 ·');
  });

  it('the status line prices each completion with its model and prompt across a /model switch, and says when part has no price', () => {
    const usage = { input_tokens: MTOK, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const short = { ...usage, input_tokens: 50_000 };
    let s: UiState = initialState({ model: 'claude-opus-5-5', contextWindow: 0, backend: 'copy', sessionId: 'root' });
    s = reduce(s, { type: 'completion-finished', threadId: 'root', model: 'claude-opus-5-5', usage });
    s = reduce(s, { type: 'ui:model', model: 'claude-haiku-5-5' });
    // A completion that began before the switch still ran on Opus.
    s = reduce(s, { type: 'completion-finished', threadId: 'root', model: 'claude-opus-5-5', usage });
    // Haiku 5.5: $0.50 per MTok for a 1M-token prompt, $0.10 for a 50K one.
    s = reduce(s, { type: 'completion-finished', threadId: 'root', model: 'claude-haiku-5-5', usage });
    s = reduce(s, { type: 'completion-finished', threadId: 'root', model: 'claude-haiku-5-5', usage: short });
    s = reduce(s, { type: 'completion-finished', threadId: 'child-1', model: 'claude-sonnet-5-5', usage });
    expect(s.status.cost).toBeCloseTo(4 + 4 + 0.5 + 0.005 + 2, 9);
    expect(s.status.costPartial).toBeUndefined();
    s = reduce(s, { type: 'completion-finished', threadId: 'child-2', model: 'local-llm', usage });
    expect(s.status).toMatchObject({ costPartial: true, usage: { input_tokens: 5 * MTOK + 50_000 } });
    expect(s.status.cost).toBeCloseTo(10.505, 9);
  });
});
