import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeServer, fingerprint, McpConfigError, parseMcpServers, problemText, readMcpFile, type McpServerEntry } from './config.js';
import { modelToolName } from './names.js';
import { trustOf } from './trust.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('MCP server definitions', () => {
  it("reads Claude Code's .mcp.json format: stdio and http servers, ${VAR} and ${VAR:-default} expanded", () => {
    const env = { HOME: '/home/u', TOKEN: 's3cret' };
    const { servers, problems } = parseMcpServers(
      {
        files: { command: 'npx', args: ['-y', 'fs-server', '${HOME}/notes'], env: { LEVEL: '${LEVEL:-info}' } },
        typed: { type: 'stdio', command: 'srv' },
        remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        bare: { url: 'http://127.0.0.1:9/mcp' },
      },
      '.mcp.json',
      env,
    );
    expect(problems).toEqual([]);
    expect(servers).toEqual({
      files: { type: 'stdio', command: 'npx', args: ['-y', 'fs-server', '/home/u/notes'], env: { LEVEL: 'info' } },
      typed: { type: 'stdio', command: 'srv', args: [], env: {} },
      remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer s3cret' } },
      bare: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: {} },
    });
  });

  it('leaves out a wrong entry with what is wrong, and keeps the others', () => {
    const { servers, problems } = parseMcpServers(
      {
        good: { command: 'srv' },
        'bad name': { command: 'srv' },
        nocmd: { args: ['x'] },
        sse: { type: 'sse', url: 'http://h/sse' },
        unset: { command: '${NOPE}/srv' },
        ftp: { type: 'http', url: 'ftp://h/x' },
      },
      '.mcp.json',
      {},
    );
    expect(Object.keys(servers)).toEqual(['good']);
    expect(problems.map((p) => problemText('.mcp.json', p))).toEqual([
      '.mcp.json: MCP server "bad name" is left out: its name must be 1 to 40 letters, digits, "_" or "-" (it becomes part of the tool names).',
      '.mcp.json: MCP server "nocmd" is left out: "command" must be a non-empty string.',
      '.mcp.json: MCP server "sse" is left out: the SSE transport is not supported; servers that speak streamable HTTP take "type": "http".',
      '.mcp.json: MCP server "unset" is left out: command uses ${NOPE}, which is not set.',
      '.mcp.json: MCP server "ftp" is left out: "url" must be http or https, not ftp:.',
    ]);
    expect(() => parseMcpServers(['x'], 'config.json', {})).toThrow(McpConfigError);
  });

  it('reads a file, saying clearly when it is missing or not the format', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ic-mcp-config-'));
    dirs.push(dir);
    const file = join(dir, 'servers.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { a: { command: 'srv' } } }));
    expect(readMcpFile(file, {}).servers).toEqual({ a: { type: 'stdio', command: 'srv', args: [], env: {} } });
    expect(() => readMcpFile(join(dir, 'missing.json'), {})).toThrow(`The MCP config file ${join(dir, 'missing.json')} does not exist.`);
    writeFileSync(file, '{"servers": {}}');
    expect(() => readMcpFile(file, {})).toThrow('must hold {"mcpServers": {"<name>": {"command": ..., "args": [...]}}}');
    writeFileSync(file, '{');
    expect(() => readMcpFile(file, {})).toThrow('is not valid JSON');
  });

  it('describes a server without the values of its variables or headers, and fingerprints the whole definition', () => {
    const stdio = { type: 'stdio' as const, command: 'npx', args: ['-y', 'my server'], env: { API_TOKEN: 'secret' } };
    expect(describeServer(stdio)).toBe("API_TOKEN=… npx -y 'my server'");
    expect(describeServer({ type: 'http', url: 'https://h/mcp', headers: { Authorization: 'Bearer x' } })).toBe('https://h/mcp (headers: Authorization)');
    expect(fingerprint(stdio)).toBe(fingerprint({ ...stdio, env: { API_TOKEN: 'secret' } }));
    expect(fingerprint(stdio)).not.toBe(fingerprint({ ...stdio, env: { API_TOKEN: 'other' } }));
    expect(fingerprint(stdio)).not.toBe(fingerprint({ ...stdio, args: ['-y', 'other'] }));
  });

  it('gives a stdio server the machine\'s network only with "network": "on", which its description and fingerprint carry', () => {
    const { servers, problems } = parseMcpServers(
      { online: { command: 'srv', network: 'on' }, plain: { command: 'srv' }, wrong: { command: 'srv', network: true } },
      '.mcp.json',
      {},
    );
    expect(servers).toEqual({
      online: { type: 'stdio', command: 'srv', args: [], env: {}, network: true },
      plain: { type: 'stdio', command: 'srv', args: [], env: {} },
    });
    expect(problems.map((p) => problemText('.mcp.json', p))).toEqual([
      '.mcp.json: MCP server "wrong" is left out: "network" must be "on" (the machine\'s network), not true; without it the server has the network commands have.',
    ]);
    expect(describeServer(servers.online)).toBe("srv (with the machine's network)");
    expect(describeServer(servers.plain)).toBe('srv');
    // An approval of the definition without it does not cover it; approvals made before the key existed still hold.
    expect(fingerprint(servers.online)).not.toBe(fingerprint(servers.plain));
    expect(fingerprint(servers.plain)).toBe(createHash('sha256').update(JSON.stringify(['stdio', 'srv', [], []])).digest('hex').slice(0, 16));
  });

  it("trusts the user's own servers; a repository's needs an approval of this very definition", () => {
    const config = { type: 'stdio' as const, command: 'srv', args: [], env: {} };
    const entry = (source: McpServerEntry['source']): McpServerEntry => ({ name: 's', source, file: 'f', config });
    expect(trustOf(entry('user-config'), undefined)).toBe('trusted');
    expect(trustOf(entry('flag'), undefined)).toBe('trusted');
    expect(trustOf(entry('mcp-json'), undefined)).toBe('unknown');
    expect(trustOf(entry('project-config'), {})).toBe('unknown');
    expect(trustOf(entry('mcp-json'), { s: { allow: true } })).toBe('approved');
    expect(trustOf(entry('mcp-json'), { s: { allow: true, fingerprint: fingerprint(config) } })).toBe('approved');
    expect(trustOf(entry('mcp-json'), { s: { allow: false, fingerprint: fingerprint(config) } })).toBe('declined');
    // The file changed since the answer: asked again.
    expect(trustOf(entry('mcp-json'), { s: { allow: true, fingerprint: 'something-else' } })).toBe('unknown');
  });

  it('names tools mcp__<server>__<tool>, within the API rules', () => {
    expect(modelToolName('files', 'read')).toBe('mcp__files__read');
    const odd = modelToolName('files', 'read.file');
    expect(odd).toMatch(/^mcp__files__read_file_[0-9a-f]{8}$/);
    const long = modelToolName('server', 'x'.repeat(100));
    expect(long).toHaveLength(64);
    expect(long).not.toBe(modelToolName('server', `${'x'.repeat(99)}y`));
  });
});
