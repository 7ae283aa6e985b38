import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSession, type SandboxSession } from './index.js';
import { cleanupTempDirs, makeRepo, tempDir } from './test-support/fixtures.js';

const open: SandboxSession[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
  await cleanupTempDirs();
});

async function session(repo: string, writable: string[] = []): Promise<SandboxSession> {
  const s = await openSession({ repo, stateDir: await tempDir('ic-state-'), containment: { writable } });
  open.push(s);
  return s;
}

const paths = (d: { files: readonly { path: string }[] }) => d.files.map((f) => f.path);

// A diff asked for ahead of need (the CLI asks while the model writes its last reply) is the one
// given when it is needed, unless the view changed in between: then it is made again.
describe('diffs made ahead of need', () => {
  it('are given again while nothing changed, and made afresh after any change to the view', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const sb = await (await session(repo)).create('root');
    await sb.writeFile('a.txt', 'A\n');
    const first = await sb.workingTreeDiff();
    expect(await sb.workingTreeDiff()).toBe(first);

    await sb.writeFile('b.txt', 'B\n');
    const afterWrite = await sb.workingTreeDiff();
    expect(paths(afterWrite)).toEqual(['a.txt', 'b.txt']);

    await sb.run('echo c > c.txt');
    const afterCommand = await sb.workingTreeDiff();
    expect(paths(afterCommand)).toEqual(['a.txt', 'b.txt', 'c.txt']);
    await sb.remove('c.txt');
    expect(paths(await sb.workingTreeDiff())).toEqual(['a.txt', 'b.txt']);
    // Each kind of diff is its own.
    expect(paths(await sb.diff())).toEqual(['a.txt', 'b.txt']);
  });

  it('a diff asked for while a command runs is never given for what the command wrote later', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    // The command waits at a FIFO until the test writes it: in a path the sandbox may write, which
    // commands see as it is (the rest of the machine they see through read-only overlays under a
    // root-run CLI, where a pipe of the host's, like a socket, leads nowhere: see command-root.ts).
    const gate = await tempDir('ic-gate-', '/var/tmp');
    const sb = await (await session(repo, [gate])).create('root');
    const fifo = path.join(gate, 'gate');
    execFileSync('mkfifo', ['-m', '644', fifo]);
    const cmd = await sb.exec(`read line < ${fifo} && echo late > late.txt`);
    const during = await sb.workingTreeDiff();
    expect(paths(during)).toEqual([]);
    await writeFile(fifo, 'go\n');
    await cmd.done;
    expect(paths(await sb.workingTreeDiff())).toEqual(['late.txt']);
  });

  it("is made afresh when the user's tree gained an ignored file where the diff creates one", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', '.gitignore': '.env\n' });
    const sb = await (await session(repo)).create('root');
    await sb.run("printf '' > .gitignore && printf 'AGENT=1\\n' > .env");
    const before = await sb.workingTreeDiff();
    expect(paths(before)).toEqual(['.env', '.gitignore']);
    await writeFile(path.join(repo, '.env'), 'USER=1\n');
    const after = await sb.workingTreeDiff();
    expect(after).not.toBe(before);
    expect(paths(after)).toEqual(['.gitignore']);
    expect(after.omitted).toMatchObject([{ path: '.env', rule: 'user-ignored' }]);
  });
});
