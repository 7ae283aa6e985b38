// MCP servers' tools in the real runtime: a stdio server (run in the root sandbox) and a streamable
// HTTP server on loopback, both written with the SDK's server API; the model is scripted.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from './testing/index.js';
import { httpServer, Rig, stdioServer } from './test-support/rig.js';

let rig: Rig | undefined;
let http: HttpFixture | undefined;
afterEach(async () => {
  await rig?.close();
  await http?.close();
  rig = undefined;
  http = undefined;
});

describe('MCP tools in the runtime', () => {
  it('offers each server tool as mcp__<server>__<tool> with its schema, and the model reads the results of both transports', async () => {
    http = await startHttpFixture();
    rig = await Rig.start({ servers: [stdioServer('files'), httpServer('remote', http.url, { Authorization: 'Bearer t0k' })] });
    await rig.mcp.settled();
    expect(rig.mcp.status().map((s) => [s.name, s.state])).toEqual([
      ['files', 'ready'],
      ['remote', 'ready'],
    ]);

    const reads = await rig.call([
      { name: 'mcp__files__add', input: { a: 2, b: 40 } },
      { name: 'mcp__remote__lookup', input: { key: 'colour' } },
    ]);
    expect(reads).toEqual([
      { name: 'mcp__files__add', text: '42', isError: false, images: 0 },
      { name: 'mcp__remote__lookup', text: 'value of colour', isError: false, images: 0 },
    ]);
    // The request offered them with the servers' schemas.
    const add = rig.offered.at(-1)!.find((t) => t.name === 'mcp__files__add')!;
    expect(add.description).toContain('Add two numbers.');
    expect(add.input_schema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
    expect(add.input_schema).not.toHaveProperty('$schema');
    // The configured headers reached the HTTP server.
    expect(http.requests.every((h) => h.authorization === 'Bearer t0k')).toBe(true);
    expect(http.calls).toEqual([{ tool: 'lookup', args: { key: 'colour' } }]);
  });

  it('passes images as image blocks, cuts long text like command output, and reports tool errors as errors', async () => {
    rig = await Rig.start({ servers: [stdioServer('files')] });
    await rig.mcp.settled();
    const [pixel, lines, fail, bad] = await rig.call([
      { name: 'mcp__files__pixel' },
      { name: 'mcp__files__lines', input: { n: 2000 } },
      { name: 'mcp__files__fail' },
      { name: 'mcp__files__add', input: { a: 'two' } },
    ]);
    expect(pixel).toMatchObject({ text: 'a 1x1 picture', images: 1, isError: false });
    expect(lines.text).toContain('line 1\n');
    expect(lines.text).toContain('[... 1500 lines of output omitted ...]');
    expect(lines.text.endsWith('line 2000')).toBe(true);
    expect(fail).toMatchObject({ text: 'it went wrong', isError: true });
    // The runtime checks arguments against the server's schema before anything is sent.
    expect(bad).toMatchObject({ isError: true });
    expect(bad.text).toContain('invalid arguments for mcp__files__add');
  });

  it('runs a stdio server in the root sandbox: its writes land there, not in the working tree, and it sees no credentials', async () => {
    process.env.FIXTURE_API_TOKEN = 'not-for-servers';
    try {
      rig = await Rig.start({ servers: [stdioServer('files', { env: { GREETING: 'hello' } })] });
      await rig.mcp.settled();
      const [write, token, greeting] = await rig.call([
        { name: 'mcp__files__write_file', input: { path: 'made-by-mcp.txt', text: 'from the server\n' } },
        { name: 'mcp__files__getenv', input: { name: 'FIXTURE_API_TOKEN' } },
        { name: 'mcp__files__getenv', input: { name: 'GREETING' } },
      ]);
      expect(write.text).toBe(`wrote made-by-mcp.txt in ${rig.repo}`);
      expect(existsSync(path.join(rig.repo, 'made-by-mcp.txt'))).toBe(false);
      expect(await rig.root.readText('made-by-mcp.txt')).toBe('from the server\n');
      expect((await rig.root.diff()).files.map((f) => f.path)).toEqual(['made-by-mcp.txt']);
      expect(token.text).toBe('(unset)');
      expect(greeting.text).toBe('hello');
      expect(rig.mcp.status()[0].runsIn).toMatch(/^sandbox/);
    } finally {
      delete process.env.FIXTURE_API_TOKEN;
    }
  });

  it('restarts a server that dies once, then gives its calls a clear error', async () => {
    rig = await Rig.start({ servers: [stdioServer('files')] });
    await rig.mcp.settled();
    const [first] = await rig.call([{ name: 'mcp__files__whoami' }]);

    const [crash] = await rig.call([{ name: 'mcp__files__crash' }]);
    expect(crash.isError).toBe(true);
    expect(crash.text).toMatch(
      /^Error: the MCP server "files" exited during the call \(exit code 3\)\. It is being restarted; call again if the call is safe to repeat \(it may have partly run\)\. Its last stderr lines:\n(.*\n)*crashing on purpose$/,
    );
    // A call right after waits for the restart, and reaches a new process.
    const [second] = await rig.call([{ name: 'mcp__files__whoami' }]);
    expect(second.isError).toBe(false);
    expect(second.text).not.toBe(first.text);
    expect(rig.mcp.status()[0]).toMatchObject({ state: 'ready', restarts: 1 });
    expect(rig.mcp.status()[0].message).toContain('restarted once after it exited (exit code 3)');

    const [again] = await rig.call([{ name: 'mcp__files__crash' }]);
    expect(again.text).toContain('It had been restarted once already: its tools are unavailable for the rest of the session');
    const [after] = await rig.call([{ name: 'mcp__files__echo', input: { text: 'hi' } }]);
    expect(after.isError).toBe(true);
    expect(after.text).toContain('Error: the MCP server "files" is not running: it exited (exit code 3)');
    expect(after.text).toContain('again after a restart');
    expect(rig.mcp.status()[0]).toMatchObject({ state: 'failed', restarts: 1 });
  });

  it('a call past the time limit gets an error and the server is told to stop it', async () => {
    http = await startHttpFixture();
    rig = await Rig.start({
      servers: [stdioServer('files'), httpServer('remote', http.url)],
      toolTimeoutMs: 1500,
      timeoutHelp: 'Raise mcpToolTimeoutMs in the config.',
    });
    await rig.mcp.settled();
    const started = Date.now();
    const [hang, echo] = await rig.call([{ name: 'mcp__remote__hang' }, { name: 'mcp__files__echo', input: { text: 'still here' } }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(hang).toMatchObject({ isError: true });
    expect(hang.text).toBe('Error: no answer within 1.5 s, the time limit for MCP tool calls; the call was cancelled. Raise mcpToolTimeoutMs in the config.');
    await http.whenCancelled();
    expect(http.cancelled).toEqual(['hang']);
    // The other call of the reply was not held up by it, and the servers are still fine.
    expect(echo).toMatchObject({ text: 'echo: still here', isError: false });
    expect(rig.mcp.status().map((s) => s.state)).toEqual(['ready', 'ready']);
  });

  it('a slow call does not block its thread or others, and an interrupt cancels it at the server', async () => {
    http = await startHttpFixture();
    rig = await Rig.start({ servers: [httpServer('remote', http.url)] });
    await rig.mcp.settled();
    await rig.system.sendUserText('t1', JSON.stringify({ calls: [{ name: 'mcp__remote__hang' }] }));
    await rig.system.whenIdle({ ignoreRunningTools: true });
    // t1's call is running at the server; another thread works meanwhile.
    const [other] = await rig.call([{ name: 'mcp__remote__lookup', input: { key: 'k' } }], 't2');
    expect(other.text).toBe('value of k');
    expect(http.cancelled).toEqual([]);
    // The user interrupts t1: the call is cancelled, and the server hears of it.
    await rig.system.sendUserText('t1', JSON.stringify({ calls: [] }));
    await http.whenCancelled();
    await rig.system.whenIdle();
    expect(http.cancelled).toEqual(['hang']);
  });

  it('starts a repository server only once approved; one nobody approved (headless) or the user declined does not start', async () => {
    const asked: string[] = [];
    rig = await Rig.start({
      servers: [stdioServer('unasked', {}, 'mcp-json'), stdioServer('yes', {}, 'mcp-json'), stdioServer('no', {}, 'mcp-json')],
      approvalHint: () => 'approve it in your config',
      askApproval: async (entry) => {
        asked.push(entry.name);
        return entry.name === 'yes';
      },
    });
    await rig.mcp.settled();
    expect(asked).toEqual(['unasked', 'yes', 'no']);
    expect(rig.mcp.status().map((s) => [s.name, s.state])).toEqual([
      ['unasked', 'declined'],
      ['yes', 'ready'],
      ['no', 'declined'],
    ]);
    await rig.close();

    rig = await Rig.start({ servers: [stdioServer('repo', {}, 'mcp-json')], approvalHint: () => 'approve it in your config' });
    await rig.mcp.settled();
    const [s] = rig.mcp.status();
    expect(s).toMatchObject({ state: 'not-approved', tools: [] });
    expect(s.message).toBe('it is defined by the repository (.mcp.json) and nobody approved it; approve it in your config');
    // Never started: no process ran in the sandbox, and the model is offered none of its tools.
    expect(s.runsIn).toBe('sandbox');
    const reads = await rig.call([{ name: 'mcp__repo__echo', input: { text: 'x' } }]);
    expect(reads[0].text).toContain("tool 'mcp__repo__echo' does not exist");
  });

  it('stops stdio servers while the sandbox is refreshed and starts them again, without counting a restart', async () => {
    rig = await Rig.start({ servers: [stdioServer('files')] });
    await rig.mcp.settled();
    const [before, readme] = await rig.call([{ name: 'mcp__files__whoami' }, { name: 'mcp__files__read_file', input: { path: 'README.md' } }]);
    expect(readme.text).toBe('fixture');
    // The user edits their tree; the refresh waits for the sandbox's processes to end, so the server is stopped for it.
    await writeFile(path.join(rig.repo, 'README.md'), 'edited by the user\n');
    const during = await rig.mcp.whileSuspended(async () => {
      const state = rig!.mcp.status()[0].state;
      await rig!.session.refreshBase();
      return state;
    });
    expect(during).toBe('suspended');
    const [after, edited] = await rig.call([{ name: 'mcp__files__whoami' }, { name: 'mcp__files__read_file', input: { path: 'README.md' } }]);
    expect(after.isError).toBe(false);
    expect(after.text).not.toBe(before.text);
    expect(edited.text).toBe('edited by the user');
    expect(rig.mcp.status()[0]).toMatchObject({ state: 'ready', restarts: 0 });
  });

  it("servers start in the background: the first model request does not wait for one still starting, and a conversation's tools never change after it", async () => {
    let release!: () => void;
    http = await startHttpFixture({ holdInitialize: new Promise<void>((resolve) => (release = resolve)) });
    rig = await Rig.start({ servers: [httpServer('remote', http.url)] });
    const first = await rig.call([]);
    expect(first).toEqual([]);
    // The model was asked while the server was still starting, without its tools.
    expect(rig.offered).toHaveLength(1);
    expect(rig.offered[0].map((t) => t.name).filter((n) => n.startsWith('mcp__'))).toEqual([]);
    expect(rig.mcp.status()[0].state).toBe('starting');
    release();
    await rig.mcp.settled();
    // Ready now, but the tools under the conversation stay as they were (its thinking is bound
    // to them): the server's tools are left out, saying why. (The CLI waits for its servers
    // before the first request, so they are in it.)
    const [s] = rig.mcp.status();
    expect(s.state).toBe('ready');
    expect(s.skippedTools.map((t) => t.name)).toContain('mcp__remote__lookup');
    for (const t of s.skippedTools) expect(t.reason).toContain('offered from the next run');
    const [lookup] = await rig.call([{ name: 'mcp__remote__lookup', input: { key: 'late' } }]);
    expect(lookup.text).toContain("tool 'mcp__remote__lookup' does not exist");
    expect(rig.offered.at(-1)).toEqual(rig.offered[0]);
  });

  it('an HTTP server that went away: the call says so, one reconnection is tried, then its calls get a clear error', async () => {
    http = await startHttpFixture();
    rig = await Rig.start({ servers: [httpServer('remote', http.url)] });
    await rig.mcp.settled();
    await http.close();
    const [lost] = await rig.call([{ name: 'mcp__remote__lookup', input: { key: 'k' } }]);
    expect(lost.isError).toBe(true);
    expect(lost.text).toMatch(/^Error: the MCP server "remote" could not be reached during the call \(.+\)\. It is being restarted/);
    await rig.mcp.settled();
    expect(rig.mcp.status()[0]).toMatchObject({ state: 'failed', restarts: 1 });
    const [after] = await rig.call([{ name: 'mcp__remote__lookup', input: { key: 'k' } }]);
    expect(after.text).toMatch(/^Error: the MCP server "remote" is not running: could not start: /);
    http = undefined;
  });

  it('a server that cannot start is failed with its stderr, and the others are not held up', async () => {
    rig = await Rig.start({
      servers: [stdioServer('broken', { command: 'no-such-mcp-server-binary', args: [] }), stdioServer('files')],
    });
    await rig.mcp.settled();
    const [broken, files] = rig.mcp.status();
    expect(files.state).toBe('ready');
    expect(broken.state).toBe('failed');
    expect(broken.message).toMatch(/^could not start: it exited before it was ready \(exit code 127\)\. Its last stderr lines:\n.*no-such-mcp-server-binary.*not found$/);
    expect(broken.stderr).toMatch(/no-such-mcp-server-binary.*not found/);
  });
});
