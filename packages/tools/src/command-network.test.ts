import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { Sandbox, SandboxSession } from '@infinity-code/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { looksOffline, NETWORK_RERUN, type CommandRequest } from './index.js';
import { ToolAgent } from './test-support/agent.js';
import { Fixtures } from './test-support/fixtures.js';

// A contained sandbox (no network) and a server on this machine's loopback: the command reaches it
// only when it runs with the machine's network. When it cannot, it looks a name up, as a package
// manager would, and fails the way commands without network fail.
describe('execute_command: a command that failed for lack of network runs again with it once the user says so', { timeout: 30_000 }, () => {
  const fx = new Fixtures();
  let session: SandboxSession;
  let sb: Sandbox;
  let repo: string;
  let server: Server;
  let port: number;
  let connections = 0;
  const agents: ToolAgent[] = [];

  beforeAll(async () => {
    repo = await fx.repo({ 'a.txt': 'alpha\n' });
    session = await fx.session(repo);
    sb = await session.create('net');
    server = createServer((c) => {
      connections++;
      c.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.close();
    for (const a of agents) await a.close();
    await fx.cleanup();
  });

  const command = () =>
    `${JSON.stringify(process.execPath)} -e "require('net').connect(${port},'127.0.0.1')` +
    `.on('connect',()=>{console.log('connected');process.exit(0)})` +
    `.on('error',()=>require('dns').lookup('registry.npmjs.org',e=>{console.error('getaddrinfo '+(e&&e.code));process.exit(1)}))"`;

  const agentAsking = (answer: boolean, asked: CommandRequest[]) => {
    const agent = new ToolAgent({
      sandboxFor: async () => sb,
      repoRoot: repo,
      askNetwork: async (request) => {
        asked.push(request);
        return answer;
      },
    });
    agents.push(agent);
    return agent;
  };

  it('the sandbox under test is contained, without network', () => {
    expect(sb.contained).toBe(true);
  });

  it('yes: the command runs again with the network, and the answer says so', async () => {
    const asked: CommandRequest[] = [];
    const before = connections;
    const r = await agentAsking(true, asked).call('execute_command', { command: command() });
    expect(asked).toEqual([expect.objectContaining({ command: command(), callId: r.callId })]);
    expect(r.text).toBe(`${NETWORK_RERUN}\nconnected\n[exit code: 0]`);
    expect(connections).toBe(before + 1);
  });

  it('no: the failure is the answer, and nothing reached the network', async () => {
    const asked: CommandRequest[] = [];
    const before = connections;
    const r = await agentAsking(false, asked).call('execute_command', { command: command() });
    expect(asked).toHaveLength(1);
    expect(r.text).toMatch(/^getaddrinfo (EAI_AGAIN|ENOTFOUND)\n\[exit code: 1\]$/);
    expect(connections).toBe(before);
  });

  it('a command that fails for another reason is not asked about', async () => {
    const asked: CommandRequest[] = [];
    const r = await agentAsking(true, asked).call('execute_command', { command: 'echo broken >&2; exit 3' });
    expect(r.text).toBe('broken\n[exit code: 3]');
    expect(asked).toEqual([]);
    expect(looksOffline('npm ERR! code EAI_AGAIN')).toBe(true);
    expect(looksOffline('Error: connect ECONNREFUSED 127.0.0.1:5432')).toBe(false);
  });
});
