// MCP servers through the built CLI, headless: a real stdio server (the SDK's server API, run in
// the root sandbox) and a real streamable HTTP server on loopback; the model is the fake Messages
// API with a scripted brain.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STDIO_FIXTURE, startHttpFixture, type HttpFixture } from '@infinity-code/mcp/testing';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, startCli, tempDir } from './support/cli.js';
import { toolCalls, toolResults, type Msg } from './support/model.js';

let api: FakeMessagesApi;
let http: HttpFixture;
let brain: FakeBrain = () => ({ text: 'No brain.' });
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: (body, i) => brain(body, i) });
  http = await startHttpFixture();
});
afterAll(async () => {
  await api.close();
  await http.close();
  cleanupTemps();
});

const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });
const stdioDef = { command: process.execPath, args: [STDIO_FIXTURE] };
const toolNames = (body: FakeRequestBody) => (body.tools ?? []).map((t) => (t as { name: string }).name);

/** A home whose user config is `config`. */
function homeWith(config: Record<string, unknown>): string {
  const home = tempDir();
  mkdirSync(join(home, '.config', 'infinity-code'), { recursive: true });
  writeFileSync(join(home, '.config', 'infinity-code', 'config.json'), JSON.stringify(config));
  return home;
}

/** stderr as it comes, and a wait for a line in it (the CLI says when each server is ready). */
function stderrWatch() {
  let all = '';
  let waiters: Array<{ text: string; resolve: () => void }> = [];
  return {
    onStderr(s: string) {
      all = s;
      waiters = waiters.filter((w) => (all.includes(w.text) ? (w.resolve(), false) : true));
    },
    until(text: string): Promise<void> {
      return all.includes(text) ? Promise.resolve() : new Promise((resolve) => waiters.push({ text, resolve }));
    },
  };
}

describe('MCP servers in headless runs', () => {
  it('the model calls a tool of a stdio server and of an HTTP server and reads the results; a slow call times out; the stdio server writes in the sandbox and --yes applies it', async () => {
    const repo = gitRepo({ 'README.md': 'fixture\n' });
    const dir = tempDir();
    const servers = join(dir, 'servers.json');
    writeFileSync(
      servers,
      JSON.stringify({
        mcpServers: {
          files: stdioDef,
          remote: { type: 'http', url: http.url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } },
        },
      }),
    );
    const watch = stderrWatch();
    const ready = Promise.all([watch.until('MCP server "files" is ready'), watch.until('MCP server "remote" is ready')]);
    brain = async (body) => {
      const messages = (body.messages ?? []) as Msg[];
      const called = new Set(toolCalls(messages).map((c) => c.name));
      if (!toolNames(body).includes('mcp__files__add') || !toolNames(body).includes('mcp__remote__lookup')) {
        // The servers start while the first request goes out; look around until they are there.
        await ready;
        return { toolUse: { name: 'list_files', input: {} } };
      }
      if (!called.has('mcp__files__add')) {
        return {
          content: [
            { type: 'tool_use', name: 'mcp__files__add', input: { a: 2, b: 40 } },
            { type: 'tool_use', name: 'mcp__remote__lookup', input: { key: 'colour' } },
            { type: 'tool_use', name: 'mcp__files__hang', input: {} },
          ],
        };
      }
      if (!called.has('mcp__files__write_file')) {
        return { toolUse: { name: 'mcp__files__write_file', input: { path: 'from-mcp.txt', text: 'written by the MCP server\n' } } };
      }
      return { text: 'Done.' };
    };
    const run = startCli(['-p', 'use the MCP tools', '--yes', '--mcp-config', servers], {
      cwd: repo,
      env: { ...env(), REMOTE_TOKEN: 'r3mote' },
      home: homeWith({ mcpToolTimeoutMs: 1500 }),
      onStderr: watch.onStderr,
    });
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);

    const last = api.requests.at(-1)!.body;
    const messages = (last.messages ?? []) as Msg[];
    const results = toolResults(messages);
    const byName = new Map(toolCalls(messages).map((c) => [c.name, results.get(c.id)!]));
    expect(byName.get('mcp__files__add')).toEqual({ text: '42', isError: false });
    expect(byName.get('mcp__remote__lookup')).toEqual({ text: 'value of colour', isError: false });
    expect(byName.get('mcp__files__hang')!.isError).toBe(true);
    expect(byName.get('mcp__files__hang')!.text).toMatch(/^Error: no answer within 1\.5 s, the time limit for MCP tool calls; the call was cancelled\. The user can raise the limit with "mcpToolTimeoutMs"/);
    expect(byName.get('mcp__files__write_file')!.text).toBe(`wrote from-mcp.txt in ${repo}`);
    // Offered with the server's schema.
    const add = (last.tools as Array<{ name: string; input_schema: unknown }>).find((t) => t.name === 'mcp__files__add')!;
    expect(add.input_schema).toMatchObject({ type: 'object', required: ['a', 'b'] });
    // The header's ${REMOTE_TOKEN} was expanded from the environment.
    expect(http.requests.some((h) => h.authorization === 'Bearer r3mote')).toBe(true);
    // The server's write was a change of the session, applied with the rest.
    expect(readFileSync(join(repo, 'from-mcp.txt'), 'utf8')).toBe('written by the MCP server\n');
    expect(r.stderr).toContain('Applied changes to 1 file(s)');
  });

  it("a repository's .mcp.json server does not start headless unless named with --mcp-config or approved in the user config", async () => {
    const repo = gitRepo({ 'README.md': 'fixture\n', '.mcp.json': JSON.stringify({ mcpServers: { files: stdioDef } }) });
    const offered: string[][] = [];
    brain = (body) => {
      offered.push(toolNames(body).filter((n) => n.startsWith('mcp__')));
      return { text: 'Nothing to call.' };
    };
    const plain = await startCli(['-p', 'hello', '--output-format', 'stream-json'], { cwd: repo, env: env() }).done;
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toContain(
      `infinity-code: MCP server "files" (${join(repo, '.mcp.json')}) is not started: it is defined by the repository (${join(repo, '.mcp.json')}) and nobody approved it; to allow it, answer its question in the terminal UI, pass --mcp-config ${join(repo, '.mcp.json')}, or set {"mcpProjectServers": {${JSON.stringify(repo)}: {"files": {"allow": true}}}} in`,
    );
    const lines = plain.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    // Every line matches docs/stream-json.schema.json (startCli checks): the init names the server, one line says it is not started.
    expect(lines[0]).toMatchObject({ type: 'system', subtype: 'init', mcp_servers: [{ name: 'files', status: 'not-approved' }] });
    expect(lines.filter((l) => l.type === 'mcp_server')).toEqual([
      {
        type: 'mcp_server',
        session_id: expect.any(String),
        thread_id: expect.any(String),
        name: 'files',
        state: 'not-approved',
        tools: [],
        message: expect.any(String),
        uuid: expect.any(String),
        timestamp: expect.any(String),
      },
    ]);
    expect(offered.flat()).toEqual([]);

    // Named with --mcp-config, or approved in the user's own config: it starts.
    for (const how of ['flag', 'user config'] as const) {
      const watch = stderrWatch();
      brain = async (body) => {
        const messages = (body.messages ?? []) as Msg[];
        if (toolCalls(messages).some((c) => c.name === 'mcp__files__echo')) return { text: 'Done.' };
        if (!toolNames(body).includes('mcp__files__echo')) {
          await watch.until('MCP server "files" is ready');
          return { toolUse: { name: 'list_files', input: {} } };
        }
        return { toolUse: { name: 'mcp__files__echo', input: { text: how } } };
      };
      const args = how === 'flag' ? ['-p', 'echo', '--mcp-config', '.mcp.json', '--output-format', 'stream-json'] : ['-p', 'echo'];
      const home = how === 'flag' ? tempDir() : homeWith({ mcpProjectServers: { [repo]: { files: { allow: true } } } });
      const r = await startCli(args, { cwd: repo, env: env(), home, onStderr: watch.onStderr }).done;
      expect(r.code, r.stderr).toBe(0);
      const messages = (api.requests.at(-1)!.body.messages ?? []) as Msg[];
      const echo = toolCalls(messages).find((c) => c.name === 'mcp__files__echo')!;
      expect(toolResults(messages).get(echo.id)).toEqual({ text: `echo: ${how}`, isError: false });
      if (how === 'flag') {
        const ready = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; state?: string; tools?: string[] }).find((l) => l.type === 'mcp_server');
        expect(ready).toMatchObject({ name: 'files', state: 'ready' });
        expect(ready!.tools).toContain('mcp__files__echo');
      }
    }
  });

  it('a repository config may not approve MCP servers, and a wrong --mcp-config file is a config error', async () => {
    const repo = gitRepo({ 'README.md': 'x\n' }, { mcpProjectServers: { '/x': { files: { allow: true } } } });
    const r = await startCli(['-p', 'hello'], { cwd: repo, env: env() }).done;
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('"mcpProjectServers" approves MCP servers, which only your own config may do');

    const clean = gitRepo({ 'README.md': 'x\n' });
    const missing = await startCli(['-p', 'hello', '--mcp-config', 'nope.json'], { cwd: clean, env: env() }).done;
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(`The MCP config file ${join(clean, 'nope.json')} does not exist.`);
  });
});

describe('headless waits for its MCP servers, within mcpStartupTimeoutMs', () => {
  it("the first request offers a ready server's tools; one that never answers is given up, reported, and the run goes on without it", async () => {
    const repo = gitRepo({ 'README.md': 'fixture\n' });
    const firstTools: string[][] = [];
    brain = (body, i) => {
      if (i === 0 || firstTools.length === 0) firstTools.push(toolNames(body).filter((n) => n.startsWith('mcp__')));
      return { text: 'Nothing to call.' };
    };
    const home = homeWith({
      mcpStartupTimeoutMs: 8000,
      mcpServers: { files: stdioDef, mute: { command: process.execPath, args: ['-e', 'process.stdin.resume()'] } },
    });
    const r = await startCli(['-p', 'hello', '--output-format', 'stream-json', '--verbose'], { cwd: repo, env: env(), home }).done;
    expect(r.code, r.stderr).toBe(0);
    // The task waited for both: one ready, the other given up after 8 s.
    expect(firstTools[0]).toContain('mcp__files__echo');
    expect(firstTools[0].some((n) => n.startsWith('mcp__mute__'))).toBe(false);
    expect(r.stderr).toContain('MCP server "mute"');
    expect(r.stderr).toContain('not ready within 8 s');
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; name?: string; state?: string });
    expect(lines.find((l) => l.type === 'mcp_server' && l.name === 'mute')).toMatchObject({ state: 'failed' });
    expect(lines.at(-1)).toMatchObject({ type: 'result' });
  });
});
