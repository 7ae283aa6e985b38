import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession, type Sandbox, type SandboxSession } from '@infinity-code/sandbox';
import { ToolAgent } from './test-support/agent.js';
import { backendsUnderTest, Fixtures } from './test-support/fixtures.js';

const backends = await backendsUnderTest();
const MB = 1024 * 1024;

describe.each(backends)("a sandbox over its disk limit, as the model sees it (%s backend)", { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let session: SandboxSession;
  let sb: Sandbox;
  let agent: ToolAgent;

  beforeAll(async () => {
    const repo = await fx.repo({ 'a.txt': 'a\n' });
    session = await openSession({ repo, stateDir: await fx.tempDir('ic-tools-state-'), backend, containment: { limits: { diskBytes: 8 * MB } } });
    sb = await session.create('writer');
    agent = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo });
  });
  afterAll(async () => {
    await agent.close();
    await session.close();
    await fx.cleanup();
  });

  it('a command that takes the storage over the limit is answered with why writes fail and what to do; create_file is refused', async () => {
    // A first command: the storage has been measured once when the one that fills it starts.
    expect((await agent.call('execute_command', { command: 'true' })).text).toBe('(no output)\n[exit code: 0]');
    const r = await agent.call('execute_command', { command: `head -c ${64 * MB} /dev/zero > big.bin && echo done` });
    expect(r.text).toMatch(/^done\n\[exit code: 0\]\n\[The sandbox's storage is now over its disk limit of 8 MB \(sandbox\.limits\.diskMB\): .* Delete files/);
    expect(r.display?.summary).toBe('exit code 0, over the disk limit');
    const refused = await agent.call('create_file', { path: 'more.txt', content: 'x\n' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^Error: Not written: the sandbox's storage \(.*\) is over its disk limit of 8 MB \(sandbox\.limits\.diskMB\)\. Delete files/);
    const rm = await agent.call('execute_command', { command: 'rm big.bin' });
    expect(rm.text).toMatch(/\[The sandbox's storage was over its disk limit of 8 MB \(sandbox\.limits\.diskMB\) when this command started, so it could not grow any file; it is under the limit now\.\]$/);
    expect((await agent.call('create_file', { path: 'more.txt', content: 'x\n' })).isError).toBe(false);
  });
});
