// Directories added with --add-dir: read_file, grep and list_files read them by absolute path
// through the sandbox's confined view; nothing writes there, and a hostile path (a link to a
// credential, `..` out, a sibling directory) reaches nothing more than a command could.
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession, type Sandbox, type SandboxSession } from '@infinity-code/sandbox';
import { ToolAgent } from './test-support/agent.js';
import { backendsUnderTest, Fixtures } from './test-support/fixtures.js';

const backends = await backendsUnderTest();

describe.each(backends)('file tools in directories added with --add-dir (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let added: string;
  let sibling: string;
  let home: string;
  let savedHome: string | undefined;
  let session: SandboxSession;
  let sb: Sandbox;
  let agent: ToolAgent;

  beforeAll(async () => {
    // Under /tmp, which commands (and so these reads) see only when it is added.
    added = await realpath(await mkdtemp('/tmp/ic-added-'));
    sibling = await realpath(await mkdtemp('/tmp/ic-not-added-'));
    // Credential locations are those of the home of the process that opens the session.
    home = await realpath(await mkdtemp('/var/tmp/ic-home-'));
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh', 'id_test'), 'PRIVATE KEY MATERIAL\n');
    savedHome = process.env.HOME;
    process.env.HOME = home;
    await writeFile(path.join(added, 'notes.md'), 'hello from the added dir\n');
    await mkdir(path.join(added, 'sub'));
    await writeFile(path.join(added, 'sub', 'data.txt'), 'one NEEDLE here\n');
    await symlink(path.join(home, '.ssh', 'id_test'), path.join(added, 'key-link'));
    await writeFile(path.join(sibling, 'secret.txt'), 'NOT ADDED NEEDLE\n');
    const repo = await fx.repo({ 'a.txt': 'a\n' });
    session = await openSession({ repo, stateDir: await fx.tempDir('ic-tools-state-'), backend, containment: { readable: [added] } });
    sb = await session.create('reader');
    agent = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo, readDirs: [added] });
  });
  afterAll(async () => {
    process.env.HOME = savedHome;
    await agent.close();
    await session.close();
    await fx.cleanup();
    for (const d of [added, sibling, home]) await rm(d, { recursive: true, force: true });
  });

  it('read_file, grep and list_files read an absolute path in an added directory', async () => {
    const read = await agent.call('read_file', { path: path.join(added, 'notes.md') });
    if (!sb.contained) {
      // Without a confined view such a read could follow links anywhere: refused, saying why.
      expect(read.isError).toBe(true);
      expect(read.text).toContain("the sandbox's confined view, which this machine can't provide");
      return;
    }
    expect(read.isError, read.text).toBe(false);
    expect(read.text).toBe(`<file name="${path.join(added, 'notes.md')}" lines="1">\n     1\thello from the added dir\n</file>`);
    const grep = await agent.call('grep', { pattern: 'NEEDLE', path: added });
    expect(grep.isError, grep.text).toBe(false);
    expect(grep.text).toContain(path.join(added, 'sub', 'data.txt'));
    expect(grep.text).not.toContain('NOT ADDED');
    const list = await agent.call('list_files', { path: added });
    expect(list.isError, list.text).toBe(false);
    expect(list.text).toContain(path.join(added, 'notes.md'));
    expect(list.text).toContain(path.join(added, 'sub', 'data.txt'));
  });

  it('a link to a credential, `..` out of the directory, and a directory not added read nothing', async () => {
    const link = await agent.call('read_file', { path: path.join(added, 'key-link') });
    expect(link.isError).toBe(true);
    expect(link.text).not.toContain('PRIVATE KEY');
    const grepLink = await agent.call('grep', { pattern: 'PRIVATE', path: added, output_mode: 'content' });
    expect(grepLink.text).not.toContain('PRIVATE KEY');
    const up = await agent.call('read_file', { path: `${added}/../${path.basename(sibling)}/secret.txt` });
    expect(up.isError).toBe(true);
    expect(up.text).not.toContain('NOT ADDED');
    const other = await agent.call('grep', { pattern: 'NEEDLE', path: sibling });
    expect(other.isError).toBe(true);
    expect(other.text).toContain('is an absolute path outside the repository');
  });

  it('nothing writes into an added directory', async () => {
    const create = await agent.call('create_file', { path: path.join(added, 'planted.txt'), content: 'x' });
    expect(create.isError).toBe(true);
    const edit = await agent.call('edit_file', { path: path.join(added, 'notes.md'), old_str: 'hello', new_str: 'pwned' });
    expect(edit.isError).toBe(true);
    expect(await readdir(added)).toEqual(expect.not.arrayContaining(['planted.txt']));
    expect(await readFile(path.join(added, 'notes.md'), 'utf8')).toBe('hello from the added dir\n');
  });
});
