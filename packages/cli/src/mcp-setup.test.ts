// Where the session's MCP servers come from, whether each may start, and the answers remembered.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint } from '@infinity-code/mcp/config';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, userConfigPath } from './config.js';
import { UserError } from './exit-codes.js';
import { mcpProgressLine, mcpServerEntries, mcpSessionOptions, rememberMcpDecision } from './mcp-setup.js';

const dirs: string[] = [];
const temp = () => {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'ic-mcp-setup-')));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function write(file: string, value: unknown) {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
}

function setup(files: string[] = []) {
  const home = temp();
  const root = temp();
  const env = { HOME: home, DIR: '/opt/tools' };
  const warnings: string[] = [];
  const input = () => ({ root, cwd: root, env, config: loadConfig({ env, projectRoot: root }), files, warn: (m: string) => warnings.push(m) });
  return { home, root, env, warnings, input, userFile: userConfigPath(env) };
}

describe('MCP servers of a session', () => {
  it('gathers the user config, .mcp.json, the project config and --mcp-config files, the later winning by name', () => {
    const t = setup(['extra.json']);
    write(t.userFile, { mcpServers: { mine: { command: 'mine' }, same: { command: 'from-user' } } });
    write(join(t.root, '.mcp.json'), { mcpServers: { repo: { command: '${DIR}/repo-server' }, same: { command: 'from-mcp-json' } } });
    write(join(t.root, '.infinity', 'config.json'), { mcpServers: { proj: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } });
    write(join(t.root, 'extra.json'), { mcpServers: { flagged: { command: 'flagged' } } });
    const entries = mcpServerEntries(t.input());
    expect(entries.map((e) => [e.name, e.source])).toEqual([
      ['mine', 'user-config'],
      ['repo', 'mcp-json'],
      ['same', 'mcp-json'],
      ['proj', 'project-config'],
      ['flagged', 'flag'],
    ]);
    expect(entries.find((e) => e.name === 'repo')!.config).toMatchObject({ command: '/opt/tools/repo-server' });
    expect(entries.find((e) => e.name === 'flagged')!.file).toBe(join(t.root, 'extra.json'));
  });

  it('--mcp-config takes JSON strings as well as files; --strict-mcp-config leaves out the configs and .mcp.json', () => {
    const t = setup();
    write(t.userFile, { mcpServers: { mine: { command: 'mine' } } });
    write(join(t.root, '.mcp.json'), { mcpServers: { repo: { command: 'repo' } } });
    write(join(t.root, '.infinity', 'config.json'), { mcpServers: { proj: { command: 'proj' } } });
    write(join(t.root, 'a.json'), { mcpServers: { fromFile: { command: 'a' } } });
    const files = ['a.json', '{"mcpServers": {"inline": {"command": "${DIR}/inline", "args": ["--x"]}}}'];
    const all = mcpServerEntries({ ...t.input(), files });
    expect(all.map((e) => [e.name, e.source])).toEqual([
      ['mine', 'user-config'],
      ['repo', 'mcp-json'],
      ['proj', 'project-config'],
      ['fromFile', 'flag'],
      ['inline', 'flag'],
    ]);
    const inline = all.find((e) => e.name === 'inline')!;
    expect(inline.config).toEqual({ type: 'stdio', command: '/opt/tools/inline', args: ['--x'], env: {} });
    expect(inline.file).toBe('--mcp-config (JSON value 2)');
    const strict = mcpServerEntries({ ...t.input(), files, strict: true });
    expect(strict.map((e) => e.name)).toEqual(['fromFile', 'inline']);
    // Strict with nothing named: no servers at all.
    expect(mcpSessionOptions({ ...t.input(), strict: true })).toBeUndefined();
  });

  it('a wrong JSON string given to --mcp-config is a config error saying which', () => {
    const t = setup();
    const bad = (value: string) => {
      try {
        mcpServerEntries({ ...t.input(), files: ['{"mcpServers": {}}', value] });
      } catch (err) {
        expect(err).toBeInstanceOf(UserError);
        expect((err as UserError).exitCode).toBe(3);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad('{not json')).toMatch(/^--mcp-config \(JSON value 2\) is not valid JSON/);
    expect(bad('{"servers": {}}')).toBe('--mcp-config (JSON value 2) must be {"mcpServers": {"<name>": {"command": ..., "args": [...]}}}.');
    expect(bad('{"mcpServers": {"x": {"args": []}}}')).toMatch(/^--mcp-config \(JSON value 2\): MCP server "x" is left out: "command" must be a non-empty string/);
  });

  it("starts the user's servers; a repository's only once approved in the user config (this definition)", () => {
    const t = setup();
    write(t.userFile, { mcpServers: { mine: { command: 'mine' } } });
    write(join(t.root, '.mcp.json'), { mcpServers: { a: { command: 'a' }, b: { command: 'b' }, c: { command: 'c' } } });
    let opts = mcpSessionOptions(t.input())!;
    expect(opts.servers.map((e) => [e.name, opts.trust(e)])).toEqual([
      ['mine', 'trusted'],
      ['a', 'unknown'],
      ['b', 'unknown'],
      ['c', 'unknown'],
    ]);
    const [, a, b, c] = opts.servers;
    rememberMcpDecision(t.env, t.root, a, true);
    rememberMcpDecision(t.env, t.root, b, false);
    // Approved for another definition: asked again.
    const saved = JSON.parse(readFileSync(t.userFile, 'utf8')) as { mcpProjectServers: Record<string, Record<string, unknown>> };
    saved.mcpProjectServers[t.root].c = { allow: true, fingerprint: 'old' };
    write(t.userFile, saved);
    opts = mcpSessionOptions(t.input())!;
    expect(opts.servers.map((e) => opts.trust(e))).toEqual(['trusted', 'approved', 'declined', 'unknown']);
    expect(opts.approvalHint!(c)).toBe(
      `to allow it, answer its question in the terminal UI, pass --mcp-config ${join(t.root, '.mcp.json')}, or set ` +
        `{"mcpProjectServers": {${JSON.stringify(t.root)}: {"c": {"allow": true}}}} in ${t.userFile}`,
    );
    // --mcp-config naming the repository's file: its servers are the user's choice.
    const flagged = mcpSessionOptions({ ...t.input(), files: ['.mcp.json'] })!;
    expect(flagged.servers.map((e) => [e.name, flagged.trust(e)])).toEqual([
      ['mine', 'trusted'],
      ['a', 'trusted'],
      ['b', 'trusted'],
      ['c', 'trusted'],
    ]);
  });

  it('remembers answers in the user config, keeping everything else in it', () => {
    const t = setup();
    write(t.userFile, { model: 'claude-opus-5-5', mcpProjectServers: { '/elsewhere': { x: { allow: true } } } });
    const entry = { name: 'srv', source: 'mcp-json' as const, file: '.mcp.json', config: { type: 'stdio' as const, command: 'srv', args: [], env: {} } };
    rememberMcpDecision(t.env, t.root, entry, true);
    expect(JSON.parse(readFileSync(t.userFile, 'utf8'))).toEqual({
      model: 'claude-opus-5-5',
      mcpProjectServers: { '/elsewhere': { x: { allow: true } }, [t.root]: { srv: { allow: true, fingerprint: fingerprint(entry.config) } } },
    });
    // The config still loads, with the answer in it.
    expect(loadConfig({ env: t.env, projectRoot: t.root }).mcpProjectServers[t.root]).toEqual({ srv: { allow: true, fingerprint: fingerprint(entry.config) } });
  });

  it('a wrong .mcp.json warns and is skipped; a wrong --mcp-config file or config entry is a config error', () => {
    const t = setup(['bad.json']);
    write(join(t.root, '.mcp.json'), '{"mcpServers": {"ok": {"command": "ok"}, "bad": {"args": []}}}');
    write(join(t.root, 'bad.json'), '{"mcpServers": {"x": {"type": "sse", "url": "http://h"}}}');
    expect(() => mcpServerEntries(t.input())).toThrow(UserError);
    expect(() => mcpServerEntries(t.input())).toThrow(
      `${join(t.root, 'bad.json')}: MCP server "x" is left out: the SSE transport is not supported; servers that speak streamable HTTP take "type": "http". Fix it, or leave the server out.`,
    );
    const ok = mcpServerEntries({ ...t.input(), files: [] });
    expect(ok.map((e) => e.name)).toEqual(['ok']);
    expect(t.warnings).toContain(`${join(t.root, '.mcp.json')}: MCP server "bad" is left out: "command" must be a non-empty string.`);

    write(join(t.root, '.mcp.json'), '{oops');
    t.warnings.length = 0;
    expect(mcpServerEntries({ ...t.input(), files: [] })).toEqual([]);
    expect(t.warnings[0]).toMatch(/\.mcp\.json is not valid JSON .* None of its MCP servers is started\.$/);

    write(t.userFile, { mcpServers: { s: { command: '' } } });
    expect(() => loadConfig({ env: t.env, projectRoot: t.root })).toThrow(`In ${t.userFile}, MCP server "s": "command" must be a non-empty string. Fix the entry or remove it.`);
    write(t.userFile, { mcpToolTimeoutMs: 0 });
    expect(() => loadConfig({ env: t.env, projectRoot: t.root })).toThrow('"mcpToolTimeoutMs" must be a whole number of milliseconds, at least 1');
    write(t.userFile, {});
    write(join(t.root, '.infinity', 'config.json'), { mcpProjectServers: {} });
    expect(() => loadConfig({ env: t.env, projectRoot: t.root })).toThrow('"mcpProjectServers" approves MCP servers, which only your own config may do');
  });

  it('passes the time limit, and keeps the user\'s secrets and the model credentials from stdio servers', () => {
    const t = setup();
    write(t.userFile, { mcpServers: { s: { command: 's' } }, mcpToolTimeoutMs: 1234, secretEnv: ['MY_SECRET'] });
    const opts = mcpSessionOptions(t.input())!;
    expect(opts.toolTimeoutMs).toBe(1234);
    expect(opts.env).toEqual({ ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: undefined, MY_SECRET: undefined });
    expect(opts.timeoutHelp).toContain('"mcpToolTimeoutMs": <milliseconds>');
    expect(mcpSessionOptions({ ...t.input(), config: { ...t.input().config, mcpServers: {} } })).toBeUndefined();
  });

  it('says in one line what became of a server', () => {
    const base = { name: 'files', source: 'mcp-json' as const, file: '/r/.mcp.json', transport: 'stdio' as const, target: 'srv', tools: ['a', 'b'], skippedTools: [], restarts: 0 };
    expect(mcpProgressLine({ ...base, state: 'ready' })).toBe('MCP server "files" is ready: 2 tools.');
    expect(mcpProgressLine({ ...base, state: 'failed', message: 'could not start: it exited before it was ready (exit code 1).' })).toBe(
      'MCP server "files" failed: could not start: it exited before it was ready (exit code 1).',
    );
    expect(mcpProgressLine({ ...base, state: 'not-approved', message: 'nobody approved it' })).toBe('MCP server "files" (/r/.mcp.json) is not started: nobody approved it.');
    expect(mcpProgressLine({ ...base, state: 'starting' })).toBeUndefined();
  });
});
