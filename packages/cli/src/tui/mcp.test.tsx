// MCP servers in the TUI: a repository's server is asked about once (the answer lands in the user
// config), /mcp lists every server with its state and tools, and the model calls a server's tool.
// Real servers (the SDK's streamable HTTP server on loopback), real MCP client, real runtime.
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint, startMcpServers, trustOf, type McpServerEntry, type McpServers } from '@infinity-code/mcp';
import { startHttpFixture, type HttpFixture } from '@infinity-code/mcp/testing';
import type { CompletionRequest, ScriptedReply } from '@infinity-code/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalAsker } from '../mcp-setup.js';
import { createCommandApprovals } from './command-approvals.js';
import { lastText, ROOT, startRig, type Rig } from './testing.js';

let rig: Rig | undefined;
let mcp: McpServers | undefined;
let http: HttpFixture | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await mcp?.close();
  await rig?.close();
  await http?.close();
  rig = undefined;
  mcp = undefined;
  http = undefined;
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** The screen as one line: borders dropped, wrapped lines joined. */
const flat = (frame: string) => frame.replace(/[│╭╮╰╯─]/g, ' ').replace(/\s+/g, ' ');

/** Looks the colour up once its tool is offered, then says what came back. */
function lookUp(r: CompletionRequest): ScriptedReply {
  if (r.messages.at(-1)!.content.some((b) => b.type === 'tool_result')) return { text: `The server says: ${lastText(r)}` };
  return { toolCall: { name: 'mcp__remote__lookup', input: { key: 'colour' } } };
}

describe('MCP servers in the TUI', () => {
  it("asks once about each repository server, remembers the answer, and /mcp lists the servers' state and tools", async () => {
    http = await startHttpFixture();
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'ic-mcp-tui-')));
    dirs.push(home);
    const env = { XDG_CONFIG_HOME: home };
    const http0 = { type: 'http' as const, url: http.url, headers: {} };
    const servers: McpServerEntry[] = [
      { name: 'remote', source: 'user-config', file: join(home, 'infinity-code', 'config.json'), config: http0 },
      { name: 'shared', source: 'mcp-json', file: '/repo/.mcp.json', config: http0 },
      { name: 'other', source: 'mcp-json', file: '/repo/.mcp.json', config: { type: 'stdio', command: 'evil-server', args: ['--all'], env: { TOKEN: 'x' } } },
    ];
    const approvals = createCommandApprovals();
    rig = await startRig({ brain: lookUp, approvals, hooks: { mcpStatus: async () => mcp!.status() } });
    // In act(): the questions reach the screen as the servers are set up.
    mcp = await rig.run(async () => startMcpServers({
      servers,
      trust: (e) => trustOf(e, undefined),
      askApproval: approvalAsker({ approvals, threadId: ROOT, env, root: '/repo' }),
      approvalHint: () => 'allow it in your config',
      // Only HTTP servers start here: the stdio one is declined.
      sandbox: () => Promise.reject(new Error('no sandbox in this test')),
      addTools: (tools) => rig!.system.addTools(tools),
    }));

    // The first question: the HTTP server the repository defines.
    await rig.untilState((s) => s.approvals.length > 0);
    let f = flat(rig.frame());
    expect(f).toContain('Start the MCP server "shared"? This repository defines it (/repo/.mcp.json).');
    expect(f).toContain(http.url);
    expect(f).toContain('Your answer is remembered for this definition in your config.');
    await rig.press('y');
    // Then the stdio one: its command line, without the values of its variables.
    await rig.untilState((s) => s.approvals.some((a) => a.server?.name === 'other'));
    f = flat(rig.frame());
    expect(f).toContain('Start the MCP server "other"?');
    expect(f).toContain('$ TOKEN=… evil-server --all');
    expect(f).toContain("It would run a program on your machine, in the session's sandbox");
    await rig.press('n');
    await rig.run(() => mcp!.settled());

    // Remembered in the user's config, for these definitions.
    const saved = JSON.parse(readFileSync(join(home, 'infinity-code', 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(saved).toEqual({
      mcpProjectServers: {
        '/repo': { shared: { allow: true, fingerprint: fingerprint(http0) }, other: { allow: false, fingerprint: fingerprint(servers[2].config) } },
      },
    });

    await rig.submit('/mcp');
    await rig.untilState((s) => s.items.some((i) => i.kind === 'notice' && i.text.startsWith('MCP servers (3):')));
    f = flat(rig.frame());
    expect(f).toContain('MCP servers (3):');
    expect(f).toMatch(/remote · ready · http · from your config \(.*config\.json\)/);
    expect(f).toContain('tools: mcp__remote__lookup, mcp__remote__slow, mcp__remote__hang');
    expect(f).toContain('shared · ready · http · from .mcp.json (/repo/.mcp.json)');
    expect(f).toContain('tools: mcp__shared__lookup, mcp__shared__slow, mcp__shared__hang');
    expect(f).toContain('other · declined · stdio, in the sandbox · from .mcp.json (/repo/.mcp.json)');
    expect(f).toContain('TOKEN=… evil-server --all');
    expect(f).toContain('the user declined it');

    // The model calls a server's tool; the transcript shows the call and the answer.
    await rig.submit('What colour?');
    await rig.settle();
    f = flat(rig.frame());
    expect(f).toContain('remote › lookup {"key":"colour"}');
    expect(f).toContain('The server says: value of colour');
  });

  it('/mcp says how to add servers when there are none', async () => {
    rig = await startRig({ brain: () => ({ text: 'hi' }) });
    await rig.submit('/mcp');
    await rig.untilState((s) => s.items.some((i) => i.kind === 'notice' && i.text.startsWith('No MCP servers.')));
    expect(flat(rig.frame())).toContain('No MCP servers. Define them in .mcp.json at the repository root, in "mcpServers" of your config, or with --mcp-config <file>.');
  });
});
