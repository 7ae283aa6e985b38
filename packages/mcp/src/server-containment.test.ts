// Issue 33 (14): a stdio server the user trusts runs contained like a command. It goes through
// the sandbox's exec, so it gets a command's /proc (kernel settings read-only, kernel memory
// hidden), no capabilities and, under a root-run CLI, an unprivileged uid; and the machine's
// network only when its definition asks for it ("network": "on"), otherwise the network commands
// have.
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Rig, stdioServer } from './test-support/rig.js';

let rig: Rig | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  for (const s of servers.splice(0)) s.close();
});

/** A listener on this machine's loopback that counts its connections. */
async function hostListener(): Promise<{ port: number; connections(): number }> {
  let count = 0;
  const server = createServer((c) => {
    count++;
    c.end();
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as { port: number }).port, connections: () => count };
}

describe.each([['the default backend', undefined], ['the copy backend', 'copy' as const]])('a stdio MCP server on %s', (_label, backend) => {
  it("can't change the kernel's settings or read its memory, though the user trusts it (its own config)", async () => {
    rig = await Rig.start({ servers: [stdioServer('files')], ...(backend ? { backend } : {}) });
    // bubblewrap is a requirement of these tests (README): unconfined here is a failure, not a skip.
    expect(rig.root.contained, 'nothing can confine here: install bubblewrap').toBe(true);
    await rig.mcp.settled();
    const hostname = await readFile('/proc/sys/kernel/hostname', 'utf8');
    const domainname = await readFile('/proc/sys/kernel/domainname', 'utf8');
    // Each written with the value it has (sysrq: `h`, help in the kernel log): even a write that
    // lands changes nothing; the error shows it was refused. sysrq where this kernel has it.
    const sysrq = existsSync('/proc/sysrq-trigger') ? [{ name: 'mcp__files__write_file', input: { path: '/proc/sysrq-trigger', text: 'h' } }] : [];
    const [kcore, ...writes] = await rig.call([
      { name: 'mcp__files__read_file', input: { path: '/proc/kcore' } },
      { name: 'mcp__files__write_file', input: { path: '/proc/sys/kernel/hostname', text: hostname } },
      { name: 'mcp__files__write_file', input: { path: '/proc/sys/kernel/domainname', text: domainname } },
      ...sysrq,
    ]);
    for (const write of writes) expect(write).toMatchObject({ isError: true, text: expect.stringMatching(/EROFS|EACCES|EPERM/) });
    // Hidden (an empty file), or refused for want of a capability, or absent from this kernel.
    expect(kcore.isError ? kcore.text : `read ${kcore.text.length} characters`).toMatch(/^read 0 characters$|EPERM|EACCES|ENOENT/);
    expect(await readFile('/proc/sys/kernel/hostname', 'utf8')).toBe(hostname);
    expect(await readFile('/proc/sys/kernel/domainname', 'utf8')).toBe(domainname);
  });

  it("is never the host's root: under a root-run CLI it runs as an unprivileged user", async () => {
    rig = await Rig.start({ servers: [stdioServer('files')], ...(backend ? { backend } : {}) });
    expect(rig.root.contained, 'nothing can confine here: install bubblewrap').toBe(true);
    await rig.mcp.settled();
    const [status] = await rig.call([{ name: 'mcp__files__read_file', input: { path: '/proc/self/status' } }]);
    const uids = /^Uid:\s+(.*)$/m.exec(status.text)![1].split(/\s+/).map(Number);
    expect(uids).toHaveLength(4);
    // Without a user namespace of its own, /proc shows the host's uid: as root, not 0. (A user's
    // server is in a user namespace where that user is 0: it is the user, no more.)
    if (process.getuid?.() === 0) expect(uids.every((u) => u !== 0), `uids ${uids.join(' ')}`).toBe(true);
    else expect(uids).toEqual([0, 0, 0, 0]);
  });

  it('reaches a listener on the host loopback only when its definition says "network": "on"', async () => {
    const listener = await hostListener();
    rig = await Rig.start({ servers: [stdioServer('plain'), stdioServer('online', { network: true })], ...(backend ? { backend } : {}) });
    // bubblewrap is a requirement of these tests (README): unconfined here is a failure, not a skip.
    expect(rig.root.contained, 'nothing can confine here: install bubblewrap').toBe(true);
    await rig.mcp.settled();
    const [plain, online] = await rig.call([
      { name: 'mcp__plain__connect', input: { port: listener.port } },
      { name: 'mcp__online__connect', input: { port: listener.port } },
    ]);
    // The sandbox's own loopback: nothing listens there.
    expect(plain.text).toMatch(/^failed E(CONNREFUSED|NETUNREACH)$/);
    expect(online.text).toBe('connected');
    expect(listener.connections()).toBe(1);
    expect(rig.mcp.status().map((s) => [s.name, s.runsIn])).toEqual([
      ['plain', 'sandbox'],
      ['online', "sandbox, with the machine's network"],
    ]);
  });
});

describe('a stdio MCP server without network that fails', () => {
  it("is said to have none, and how to give it the machine's, when its errors look like it wanted some", async () => {
    const offline = stdioServer('fetcher', { args: ['-e', "console.error('getaddrinfo EAI_AGAIN registry.npmjs.org'); process.exit(1)"] });
    const broken = stdioServer('broken', { args: ['-e', "console.error('SyntaxError: bad'); process.exit(1)"] });
    rig = await Rig.start({ servers: [offline, broken] });
    await rig.mcp.settled();
    const [fetcher, other] = rig.mcp.status();
    expect(fetcher.state).toBe('failed');
    expect(fetcher.message).toMatch(/^could not start: it exited before it was ready \(exit code 1\)\. It has no network but what commands have: "network": "on" in its definition gives it the machine's\. Its last stderr lines:\n.*EAI_AGAIN/);
    expect(other.message).not.toContain('network');
  });
});

describe('a stdio MCP server whose files are in /tmp', () => {
  it("fails to start in the sandbox's private /tmp, and the message says why and what to do", async () => {
    const dir = mkdtempSync(join('/tmp', 'ic-mcp-server-'));
    const file = join(dir, 'server.js');
    writeFileSync(file, 'process.stdin.resume();\n');
    try {
      rig = await Rig.start({ servers: [stdioServer('tmpserver', { args: [file] })] });
      // bubblewrap is a requirement of these tests (README): unconfined here is a failure, not a skip.
      expect(rig.root.contained, 'nothing can confine here: install bubblewrap').toBe(true);
      await rig.mcp.settled();
      const [status] = rig.mcp.status();
      expect(status.state).toBe('failed');
      expect(status.message).toContain(`It names ${file}, but the sandbox gives commands a private /tmp`);
      expect(status.message).toMatch(/"readable"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
