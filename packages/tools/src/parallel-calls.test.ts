// Several calls of one reply, dispatched back to back as the runtime does, through the real tools
// on a real sandbox. The probe holds chosen sandbox operations, so order is shown by what the
// tools asked of the sandbox, never by timing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxSession } from '@infinity-code/sandbox';
import { CANCELLED_BEFORE_START, codingTools, type CodingTools } from './index.js';
import { backendsUnderTest, Fixtures } from './test-support/fixtures.js';
import { dispatchReply, type ReplyCall } from './test-support/reply.js';
import { SandboxProbe } from './test-support/sandbox-probe.js';

const backends = await backendsUnderTest();

const edit = (path: string, old_str: string, new_str: string): ReplyCall => ({ name: 'edit_file', input: { path, old_str, new_str } });
const read = (path: string): ReplyCall => ({ name: 'read_file', input: { path } });
const run = (command: string): ReplyCall => ({ name: 'execute_command', input: { command } });

describe.each(backends)('several calls in one reply (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let repo: string;
  let session: SandboxSession;
  let sb: Sandbox;
  let probe: SandboxProbe;
  let set: CodingTools;
  const reply = (calls: ReplyCall[], threadId = 'thread-a') => dispatchReply(set.tools, threadId, calls);

  beforeAll(async () => {
    repo = await fx.repo({ 'README.md': '# parallel\n' });
    session = await fx.session(repo, backend);
    sb = await session.create('parallel');
  });
  afterEach(async () => {
    probe.releaseAll();
    await set.executeCommand.whenIdle();
    // Every call has answered: no thread holds a place in the order any more.
    expect(set.order.size).toBe(0);
  });
  afterAll(async () => {
    await fx.cleanup();
  });

  /** Fresh tools over a fresh probe, and the files a test starts from. */
  async function setup(files: Record<string, string>): Promise<void> {
    for (const [p, content] of Object.entries(files)) await sb.writeFile(p, content);
    probe = new SandboxProbe(sb);
    set = codingTools({ sandboxFor: async () => probe.view, repoRoot: repo, uncontained: { kind: 'allow' } });
  }

  it('applies two edits of one file in order: the second sees the first', async () => {
    await setup({ 'twice.txt': 'alpha\n' });
    const write = probe.hold('writeFile twice.txt');
    const [first, second] = reply([edit('twice.txt', 'alpha', 'beta'), edit('twice.txt', 'beta', 'gamma')]);
    await write.reached;
    // The first edit is writing; the second has not even read the file yet.
    expect(probe.log.filter((e) => e === 'readFile twice.txt')).toHaveLength(1);
    write.release();
    expect((await first.answer).text).toContain('Edited twice.txt at line 1');
    expect((await second.answer).text).toContain('Edited twice.txt at line 1');
    expect(await sb.readText('twice.txt')).toBe('gamma\n');
    expect(probe.log.lastIndexOf('readFile twice.txt')).toBeGreaterThan(probe.indexOf('writeFile twice.txt: done'));
  });

  it('reads a file created earlier in the same reply', async () => {
    await setup({});
    const [create, readBack] = reply([{ name: 'create_file', input: { path: 'fresh.txt', content: 'just made\n' } }, read('fresh.txt')]);
    expect((await create.answer).isError).toBe(false);
    const r = await readBack.answer;
    expect(r.isError).toBe(false);
    expect(r.text).toContain('just made');
  });

  it('runs the reads of a reply at the same time, and a later edit only after all of them', async () => {
    await setup({ 'a.txt': 'aaa\n', 'b.txt': 'bbb\n', 'c.txt': 'ccc\n' });
    const holds = [probe.hold('readFile a.txt'), probe.hold(/^exec .*--regexp=bbb/), probe.hold('readFile b.txt')];
    const calls = reply([read('a.txt'), { name: 'grep', input: { pattern: 'bbb' } }, read('b.txt'), edit('c.txt', 'ccc', 'a and b read')]);
    // All three reads are under way at once: none could get here while another waited on its hold.
    await Promise.all(holds.map((h) => h.reached));
    expect(probe.indexOf(/c\.txt/)).toBe(-1);
    for (const h of holds) h.release();
    const [a, grep, b, e] = await Promise.all(calls.map((c) => c.answer));
    expect(a.text).toContain('aaa');
    expect(grep.text).toContain('b.txt');
    expect(b.text).toContain('bbb');
    expect(e.isError).toBe(false);
    const editStart = probe.indexOf(/c\.txt/);
    for (const done of ['readFile a.txt: done', 'readFile b.txt: done', /^exec .*--regexp=bbb.*: done$/]) {
      expect(probe.indexOf(done)).toBeGreaterThanOrEqual(0);
      expect(probe.indexOf(done)).toBeLessThan(editStart);
    }
  });

  it('starts a command after the edits asked before it, so it sees them', async () => {
    await setup({ 'cmd.txt': 'before\n' });
    const write = probe.hold('writeFile cmd.txt');
    const [change, cat] = reply([edit('cmd.txt', 'before', 'after'), run('cat cmd.txt')]);
    await write.reached;
    expect(probe.indexOf('exec cat cmd.txt')).toBe(-1);
    write.release();
    expect((await change.answer).isError).toBe(false);
    expect((await cat.answer).text).toBe('after\n[exit code: 0]');
    expect(probe.indexOf('exec cat cmd.txt')).toBeGreaterThan(probe.indexOf('writeFile cmd.txt: done'));
  });

  it('lets nothing wait for a command', async () => {
    await setup({ 'free.txt': 'one\n' });
    // Held as it starts its process: to the order, the command is running from here on.
    const start = probe.hold('exec echo started');
    const [command, change, readBack] = reply([run('echo started'), edit('free.txt', 'one', 'two'), read('free.txt')]);
    await start.reached;
    expect((await change.answer).isError).toBe(false);
    expect((await readBack.answer).text).toContain('two');
    start.release();
    expect((await command.answer).text).toBe('started\n[exit code: 0]');
  });

  it('does not make another thread wait for this thread\'s write', async () => {
    await setup({ 'shared.txt': 'old\n' });
    const write = probe.hold('writeFile shared.txt');
    const [change] = reply([edit('shared.txt', 'old', 'new')], 'thread-a');
    await write.reached;
    // The same thread's next read waits for the write; another thread's read does not.
    const [ownRead] = reply([read('shared.txt')], 'thread-a');
    let ownAnswered = false;
    void ownRead.answer.then(() => (ownAnswered = true));
    const [otherRead] = reply([read('shared.txt')], 'thread-b');
    expect((await otherRead.answer).text).toContain('old');
    expect(ownAnswered).toBe(false);
    write.release();
    expect((await change.answer).isError).toBe(false);
    expect((await ownRead.answer).text).toContain('new');
  });

  it('goes on after a call that failed', async () => {
    await setup({ 'fail.txt': 'kept\n' });
    const [failed, create, readBack, cat] = reply([
      edit('fail.txt', 'not in the file', 'x'),
      { name: 'create_file', input: { path: 'after-failure.txt', content: 'made anyway\n' } },
      read('after-failure.txt'),
      run('cat after-failure.txt'),
    ]);
    expect((await failed.answer).text).toContain('old_str not found in fail.txt');
    expect((await create.answer).isError).toBe(false);
    expect((await readBack.answer).text).toContain('made anyway');
    expect((await cat.answer).text).toBe('made anyway\n[exit code: 0]');
  });

  it('answers a call cancelled while it waited at once, never runs it, and lets the later calls go on', async () => {
    await setup({ 'queue.txt': 'one\n' });
    const write = probe.hold('writeFile queue.txt');
    const [first, second, readBack, cat] = reply([
      edit('queue.txt', 'one', 'two'),
      edit('queue.txt', 'two', 'three'),
      read('queue.txt'),
      run('cat queue.txt'),
    ]);
    await write.reached;
    second.cancel();
    cat.cancel();
    // Both answer while the first edit is still held: they no longer wait for anything.
    expect(await second.answer).toEqual({ text: CANCELLED_BEFORE_START, isError: true });
    expect(await cat.answer).toEqual({ text: 'Command cancelled before it started.', isError: true });
    write.release();
    expect((await first.answer).isError).toBe(false);
    const r = await readBack.answer;
    expect(r.text).toContain('two');
    expect(r.text).not.toContain('three');
    expect(await sb.readText('queue.txt')).toBe('two\n');
    expect(probe.indexOf('exec cat queue.txt')).toBe(-1);
  });

  it('tells the model how several calls in one reply are ordered', () => {
    set = codingTools({ sandboxFor: async () => sb });
    const description = (name: string) => set.tools.find((t) => t.name === name)!.description;
    for (const name of ['read_file', 'list_files', 'grep']) expect(description(name)).toContain('reads run at the same time');
    for (const name of ['create_file', 'edit_file']) expect(description(name)).toContain('so later calls see it');
    expect(description('execute_command')).toContain('nothing waits for a command');
  });
});
