import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '@infinity-code/sandbox';
import { READ_MEMORY_LIMITS, ReadMemory, type ThreadState } from './read-memory.js';
import { oneCallBrain, ToolAgent } from './test-support/agent.js';
import { backendsUnderTest, Fixtures } from './test-support/fixtures.js';

const UNCHANGED = /^File unchanged since your last read of it \(\d+ lines?\); its content is in your earlier read_file result\.$/;

describe('ReadMemory', () => {
  const thread = (id: string, contextTokens: number, messageCount: number): ThreadState => ({ id, contextTokens, messageCount });

  it('knows a range the thread read of unchanged content, once', () => {
    const m = new ReadMemory();
    m.remember(thread('t', 100, 4), 'a.ts', '1-', 'h1');
    expect(m.seen(thread('t', 150, 8), 'a.ts', '1-', 'h1')).toBe(true);
    // Used up: asked again, the content is sent again (a model that can't find it gets it).
    expect(m.seen(thread('t', 160, 12), 'a.ts', '1-', 'h1')).toBe(false);
    m.remember(thread('t', 160, 12), 'a.ts', '1-', 'h1');
    expect(m.seen(thread('t', 170, 16), 'a.ts', '1-', 'h1')).toBe(true);
  });

  it('does not know other ranges, other threads, changed content or forgotten files', () => {
    const m = new ReadMemory();
    m.remember(thread('t', 100, 4), 'a.ts', '1-', 'h1');
    m.remember(thread('t', 100, 4), 'a.ts', '5-9', 'h1');
    expect(m.seen(thread('t', 110, 6), 'a.ts', '1-10', 'h1')).toBe(false);
    expect(m.seen(thread('u', 110, 6), 'a.ts', '1-', 'h1')).toBe(false);
    expect(m.seen(thread('t', 110, 6), 'b.ts', '1-', 'h1')).toBe(false);
    expect(m.seen(thread('t', 110, 6), 'a.ts', '1-', 'h2')).toBe(false);
    // A miss changes nothing by itself (the read that follows remembers the new content).
    expect(m.seen(thread('t', 110, 6), 'a.ts', '5-9', 'h1')).toBe(true);
    m.remember(thread('t', 110, 6), 'a.ts', '1-', 'h2');
    expect(m.seen(thread('t', 110, 6), 'a.ts', '1-', 'h2')).toBe(true);
    m.remember(thread('t', 120, 8), 'a.ts', '1-', 'h1');
    m.forget('t', 'a.ts');
    expect(m.seen(thread('t', 130, 10), 'a.ts', '1-', 'h1')).toBe(false);
  });

  it('forgets what a thread read once its context shrinks (its history was compacted)', () => {
    const m = new ReadMemory();
    m.remember(thread('t', 5_000, 10), 'a.ts', '1-', 'h1');
    m.remember(thread('t', 5_000, 10), 'b.ts', '1-', 'h1');
    m.observe(thread('t', 9_000, 14));
    // Compaction: the runtime sets the size to 0, then the next completion reports the smaller size.
    m.observe(thread('t', 0, 16));
    m.observe(thread('t', 2_000, 18));
    // Even once the context has grown past its old size, the earlier reads are gone.
    expect(m.seen(thread('t', 9_500, 20), 'a.ts', '1-', 'h1')).toBe(false);
    expect(m.seen(thread('t', 9_500, 20), 'b.ts', '1-', 'h1')).toBe(false);
    // Reads after the compaction count again.
    m.remember(thread('t', 9_500, 20), 'a.ts', '1-', 'h1');
    expect(m.seen(thread('t', 9_600, 22), 'a.ts', '1-', 'h1')).toBe(true);
  });

  it('sends reads older than the age bound again (a compaction no call saw)', () => {
    const m = new ReadMemory();
    m.remember(thread('t', 100, 10), 'a.ts', '1-', 'h1');
    m.remember(thread('t', 100, 10), 'b.ts', '1-', 'h1');
    expect(m.seen(thread('t', 200, 10 + READ_MEMORY_LIMITS.maxAgeMessages), 'a.ts', '1-', 'h1')).toBe(true);
    expect(m.seen(thread('t', 200, 11 + READ_MEMORY_LIMITS.maxAgeMessages), 'b.ts', '1-', 'h1')).toBe(false);
  });

  it('stays bounded: least recently used files, ranges and threads are forgotten first', () => {
    const m = new ReadMemory();
    for (let i = 0; i < READ_MEMORY_LIMITS.files + 500; i++) m.remember(thread(`t${i % 1500}`, 1, 1), `f${i}.ts`, '1-', 'h');
    expect(m.size).toEqual({ files: READ_MEMORY_LIMITS.files, threads: READ_MEMORY_LIMITS.threads });
    // The oldest file entries went first; the newest are there.
    expect(m.seen(thread('t0', 1, 2), 'f0.ts', '1-', 'h')).toBe(false);
    const last = READ_MEMORY_LIMITS.files + 499;
    expect(m.seen(thread(`t${last % 1500}`, 1, 2), `f${last}.ts`, '1-', 'h')).toBe(true);
    // Ranges per file are bounded too.
    const r = new ReadMemory();
    for (let i = 1; i <= READ_MEMORY_LIMITS.rangesPerFile + 1; i++) r.remember(thread('t', 1, 1), 'a.ts', `${i}-${i}`, 'h');
    expect(r.seen(thread('t', 1, 2), 'a.ts', '1-1', 'h')).toBe(false);
    expect(r.seen(thread('t', 1, 2), 'a.ts', `${READ_MEMORY_LIMITS.rangesPerFile + 1}-${READ_MEMORY_LIMITS.rangesPerFile + 1}`, 'h')).toBe(true);
  });

  it('a thread seen again after being forgotten starts afresh, never matching reads from before', () => {
    const m = new ReadMemory();
    m.remember(thread('old', 100, 4), 'a.ts', '1-', 'h');
    for (let i = 0; i < READ_MEMORY_LIMITS.threads; i++) m.observe(thread(`other${i}`, 1, 1));
    expect(m.seen(thread('old', 200, 8), 'a.ts', '1-', 'h')).toBe(false);
  });
});

const backends = await backendsUnderTest();

describe.each(backends)('read_file re-reads (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let sb: Sandbox;
  let agent: ToolAgent;
  /** Set to make the next completions report a small context, as after a compaction. */
  let shrunk = false;

  beforeAll(async () => {
    const repo = await fx.repo({ 'a.txt': 'alpha\nbeta\ngamma\n', 'b.txt': 'one\n' });
    const session = await fx.session(repo, backend);
    sb = await session.create('rereader');
    agent = new ToolAgent({
      sandboxFor: async () => sb,
      repoRoot: repo,
      brain: (r) => ({ ...oneCallBrain(r), ...(shrunk ? { usage: { input_tokens: 5 } } : {}) }),
    });
  });
  afterAll(async () => {
    await agent.close();
    await fx.cleanup();
  });

  it('answers an unchanged re-read of the same range by pointing at the earlier result', async () => {
    const t = 'reader-1';
    const first = await agent.call('read_file', { path: 'a.txt' }, t);
    expect(first.text).toContain('     1\talpha');
    const second = await agent.call('read_file', { path: 'a.txt' }, t);
    expect(second.isError).toBe(false);
    expect(second.text).toBe('File unchanged since your last read of it (3 lines); its content is in your earlier read_file result.');
    expect(second.display).toEqual({ title: 'Read a.txt', summary: 'unchanged since the last read' });
    // Asked once more, it is sent: the model may not find the earlier result.
    expect((await agent.call('read_file', { path: 'a.txt' }, t)).text).toContain('     1\talpha');
    // Another range, another file, another thread: sent.
    expect((await agent.call('read_file', { path: 'a.txt', start_line: 2 }, t)).text).toContain('     2\tbeta');
    expect((await agent.call('read_file', { path: 'a.txt', offset: 2 }, t)).text).toMatch(UNCHANGED);
    expect((await agent.call('read_file', { path: 'a.txt' }, 'reader-2')).text).toContain('     1\talpha');
  });

  it('sends the file again once it changed: through edit_file, create_file or anything else', async () => {
    const t = 'reader-3';
    await agent.call('read_file', { path: 'b.txt' }, t);
    await agent.call('edit_file', { path: 'b.txt', old_str: 'one', new_str: 'two' }, t);
    expect((await agent.call('read_file', { path: 'b.txt' }, t)).text).toContain('     1\ttwo');
    // Changed back to what was read before the edit: still sent (the thread's last view of it was the edit).
    await agent.call('edit_file', { path: 'b.txt', old_str: 'two', new_str: 'one' }, t);
    await agent.call('read_file', { path: 'b.txt' }, t);
    await agent.call('create_file', { path: 'b.txt', content: 'one\n', overwrite: true }, t);
    expect((await agent.call('read_file', { path: 'b.txt' }, t)).text).toContain('     1\tone');
    // Changed by a command (or another thread): the content differs, so it is sent.
    await sb.writeFile('b.txt', 'three\n');
    expect((await agent.call('read_file', { path: 'b.txt' }, t)).text).toContain('     1\tthree');
    expect((await agent.call('read_file', { path: 'b.txt' }, t)).text).toMatch(UNCHANGED);
  });

  it('sends the file again after the thread\'s context shrank (its history was compacted)', async () => {
    // Without a shrink, a call in between changes nothing.
    await agent.call('read_file', { path: 'a.txt' }, 'reader-5');
    await agent.call('list_files', {}, 'reader-5');
    expect((await agent.call('read_file', { path: 'a.txt' }, 'reader-5')).text).toMatch(UNCHANGED);
    const t = 'reader-4';
    await agent.call('read_file', { path: 'a.txt' }, t);
    shrunk = true;
    try {
      await agent.call('list_files', {}, t);
    } finally {
      shrunk = false;
    }
    // The context is back to growing, from far below; what was read before is gone from it.
    expect((await agent.call('read_file', { path: 'a.txt' }, t)).text).toContain('     1\talpha');
    expect((await agent.call('read_file', { path: 'a.txt' }, t)).text).toMatch(UNCHANGED);
  });
});
