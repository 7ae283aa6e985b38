import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '@infinity-code/sandbox';
import { storedResultDisplay } from './result-display.js';
import { ToolAgent } from './test-support/agent.js';
import { backendsUnderTest, Fixtures, PNG_1X1 } from './test-support/fixtures.js';

const backends = await backendsUnderTest();
const lines = (n: number, label = 'line') => Array.from({ length: n }, (_, i) => `${label} ${i + 1}`).join('\n') + '\n';

describe.each(backends)('read_file (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let repo: string;
  let sb: Sandbox;
  let agent: ToolAgent;
  const read = (input: Record<string, unknown>) => agent.call('read_file', input);

  beforeAll(async () => {
    repo = await fx.repo({
      'src/a.ts': lines(10),
      'big.txt': lines(5000),
      'empty.txt': '',
      'crlf.txt': 'one\r\ntwo\r\n',
      'bin.dat': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2, 3]),
      'latin1.txt': Buffer.from('caf\xe9\n', 'latin1'),
      'img.png': PNG_1X1,
      'no-extension': PNG_1X1,
      'link-in': { symlink: 'src/a.ts' },
      'dir-link-in': { symlink: 'src' },
      'link-out': { symlink: '/etc/hostname' },
      'dir-link-out': { symlink: '/etc' },
      'rel-link-out': { symlink: '../../outside.txt' },
      'loop-a': { symlink: 'loop-b' },
      'loop-b': { symlink: 'loop-a' },
    });
    const session = await fx.session(repo, backend);
    sb = await session.create('reader');
    agent = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo });
  });
  afterAll(async () => {
    await agent.close();
    await fx.cleanup();
  });

  it('shows lines numbered like cat -n (number right-aligned, a tab) with the line count', async () => {
    const r = await read({ path: 'src/a.ts' });
    expect(r.isError).toBe(false);
    expect(r.text.split('\n')).toEqual([
      '<file name="src/a.ts" lines="10">',
      ...Array.from({ length: 10 }, (_, i) => `${String(i + 1).padStart(6)}\tline ${i + 1}`),
      '</file>',
    ]);
    // UIs get the outcome in a few words instead of reading the excerpt.
    expect(r.display).toEqual({ title: 'Read src/a.ts', summary: '10 lines' });
  });

  it('reads a range, and says when the range ends past the end of the file', async () => {
    const part = await read({ path: 'src/a.ts', start_line: 3, end_line: 5 });
    expect(part.text).toBe('<file name="src/a.ts" lines="10">\n     3\tline 3\n     4\tline 4\n     5\tline 5\n</file>');
    expect(part.display).toEqual({ title: 'Read src/a.ts', summary: 'lines 3-5 of 10' });
    const over = await read({ path: 'src/a.ts', start_line: 9, end_line: 40 });
    expect(over.isError).toBe(false);
    expect(over.text).toContain('    10\tline 10\n</file>');
    expect(over.text).toContain('The file ends at line 10; line 40 is past its end.');
  });

  it('takes offset and limit (Claude Code\'s names) as well', async () => {
    const part = await read({ path: 'src/a.ts', offset: 3, limit: 3 });
    expect(part.text).toBe('<file name="src/a.ts" lines="10">\n     3\tline 3\n     4\tline 4\n     5\tline 5\n</file>');
    expect((await read({ path: 'src/a.ts', offset: 0, limit: 1 })).text).toContain('\n     1\tline 1\n</file>');
    expect((await read({ path: 'src/a.ts', limit: 2 })).display).toEqual({ title: 'Read src/a.ts', summary: 'lines 1-2 of 10' });
    expect((await read({ path: 'src/a.ts', start_line: 9, limit: 1 })).display).toEqual({ title: 'Read src/a.ts', summary: 'lines 9-9 of 10' });
    const both = await read({ path: 'src/a.ts', offset: 3, start_line: 3 });
    expect(both.isError).toBe(true);
    expect(both.text).toBe('Error: Give start_line or offset, not both (they mean the same).');
    expect((await read({ path: 'src/a.ts', end_line: 3, limit: 3 })).text).toBe('Error: Give end_line or limit, not both.');
    // Reading on from a cut read uses the caller's name for it.
    const big = await read({ path: 'big.txt', offset: 1 });
    expect(big.text).toContain('To read on, call read_file with offset=2001.]');
    expect((await read({ path: 'src/a.ts', offset: 11 })).text).toBe(
      'Error: offset 11 is past the end of src/a.ts, which has 10 lines. Read from line 1 to 10 (or less).',
    );
  });

  it('refuses a start past the end, saying how long the file is', async () => {
    const r = await read({ path: 'src/a.ts', start_line: 11 });
    expect(r.isError).toBe(true);
    expect(r.text).toBe(
      'Error: start_line 11 is past the end of src/a.ts, which has 10 lines. Read from line 1 to 10 (or less).',
    );
    const inverted = await read({ path: 'src/a.ts', start_line: 5, end_line: 2 });
    expect(inverted.isError).toBe(true);
    expect(inverted.text).toContain('end_line (2) is before start_line (5)');
  });

  it('truncates long files with a note saying how to read on', async () => {
    const r = await read({ path: 'big.txt' });
    const shown = r.text.split('\n').filter((l) => /^\s*\d+\t/.test(l));
    expect(shown).toHaveLength(2000);
    expect(r.text).toContain('<file name="big.txt" lines="5000">');
    expect(r.text).toContain('[Showing lines 1-2000 of 5000; the output limit was reached. To read on, call read_file with start_line=2001.]');
    const next = await read({ path: 'big.txt', start_line: 2001, end_line: 2002 });
    expect(next.text).toContain('  2001\tline 2001\n  2002\tline 2002\n</file>');
  });

  it('refuses files too big to load, pointing to grep and sed', async () => {
    await sb.writeFile('huge.log', Buffer.alloc(33 * 1024 * 1024, 'x'));
    const r = await read({ path: 'huge.log' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/"huge\.log" is too big to read \(34603008 bytes; the limit is 33554432\)\. Use grep/);
    expect(r.text).toContain("sed -n '100,200p' huge.log");
  });

  it('handles empty files and CRLF line ends', async () => {
    expect((await read({ path: 'empty.txt' })).text).toBe('<file name="empty.txt" lines="0">\n(empty file)\n</file>');
    expect((await read({ path: 'crlf.txt' })).text).toBe('<file name="crlf.txt" lines="2">\n     1\tone\n     2\ttwo\n</file>');
  });

  it('returns images, recognised by content, as image blocks', async () => {
    for (const path of ['img.png', 'no-extension']) {
      const r = await read({ path });
      expect(r.isError).toBe(false);
      expect(r.content).toEqual([
        { type: 'text', text: `Image ${path} (image/png, ${PNG_1X1.length} bytes):` },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1X1.toString('base64') } },
      ]);
    }
  });

  it('a result read back as stored (a resumed transcript) gives UIs what the live call gave them', async () => {
    const answers = [
      await read({ path: 'src/a.ts' }),
      await read({ path: 'src/a.ts', start_line: 3, end_line: 5 }),
      await read({ path: 'src/a.ts', start_line: 9, end_line: 40 }),
      await read({ path: 'big.txt' }),
      await read({ path: 'empty.txt' }),
      await read({ path: 'crlf.txt' }),
      await read({ path: 'img.png' }),
    ];
    for (const r of answers) {
      expect(r.display).toBeDefined();
      expect(storedResultDisplay({ name: 'read_file' }, r)).toEqual(r.display);
    }
    expect(answers.map((r) => r.display?.summary)).toEqual(['10 lines', 'lines 3-5 of 10', 'lines 9-10 of 10', 'lines 1-2000 of 5000', 'empty file', '2 lines', `image, image/png, ${PNG_1X1.length} bytes`]);
    // A second read of the same lines in one thread says only that they are unchanged (the line names the file).
    await agent.call('read_file', { path: 'src/a.ts' }, 'reread');
    const again = await agent.call('read_file', { path: 'src/a.ts' }, 'reread');
    expect(again.display?.summary).toBe('unchanged since the last read');
    expect(storedResultDisplay({ name: 'read_file' }, again)).toEqual({ summary: 'unchanged since the last read' });
    // An error is shown as it was written; other tools' results are theirs to read.
    const bin = await read({ path: 'bin.dat' });
    expect(storedResultDisplay({ name: 'read_file' }, bin)).toBeUndefined();
    expect(storedResultDisplay({ name: 'grep' }, answers[0])).toBeUndefined();
  });

  it('refuses binary and non-UTF-8 files with a message', async () => {
    const bin = await read({ path: 'bin.dat' });
    expect(bin.isError).toBe(true);
    expect(bin.text).toBe(
      'Error: "bin.dat" is a binary file (9 bytes; it contains NUL bytes). read_file shows text files and PNG, JPEG, ' +
        'GIF or WebP images only; to inspect it use execute_command, e.g. `xxd bin.dat | head -n 20`.',
    );
    const latin = await read({ path: 'latin1.txt' });
    expect(latin.isError).toBe(true);
    expect(latin.text).toContain('it is not valid UTF-8 text');
  });

  it('says a missing file does not exist, and a directory is not a file', async () => {
    const missing = await read({ path: 'src/nope.ts' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/^Error: "src\/nope\.ts" does not exist in the sandbox\./);
    const dir = await read({ path: 'src' });
    expect(dir.isError).toBe(true);
    expect(dir.text).toContain('"src" is a directory, not a file. Use list_files');
    const viaLink = await read({ path: 'dir-link-in' });
    expect(viaLink.isError).toBe(true);
    expect(viaLink.text).toContain('is a directory, not a file. Use list_files');
  });

  it('refuses paths that leave the repository: "..", absolute paths elsewhere, symlinks out', async () => {
    const cases: Array<[string, RegExp]> = [
      ['../outside.txt', /Path "\.\.\/outside\.txt" leaves the repository through "\.\."/],
      ['src/../../outside.txt', /leaves the repository through "\.\."/],
      ['/etc/hostname', /Path "\/etc\/hostname" is an absolute path outside the repository/],
      ['link-out', /Path "link-out" goes through a symbolic link that points outside the repository \(to \/etc\/hostname\)/],
      ['dir-link-out/passwd', /goes through a symbolic link that points outside the repository/],
      ['rel-link-out', /goes through a symbolic link that points outside the repository \(to \.\.\/\.\.\/outside\.txt\)/],
      // A link that leads nowhere is not called one that leads out.
      ['loop-a', /^Error: Path "loop-a" has too many levels of symbolic links\. Tools only act/],
    ];
    for (const [path, message] of cases) {
      const r = await read({ path });
      expect(r.isError, path).toBe(true);
      expect(r.text, path).toMatch(message);
      expect(r.text, path).toContain('use a path relative to the repository root');
    }
  });

  it('accepts an absolute path inside the repository and symlinks that stay inside', async () => {
    const abs = await read({ path: `${repo}/src/a.ts`, start_line: 1, end_line: 1 });
    expect(abs.isError).toBe(false);
    expect(abs.text).toContain('<file name="src/a.ts" lines="10">\n     1\tline 1');
    const viaLink = await read({ path: 'link-in', end_line: 1 });
    expect(viaLink.text).toContain('     1\tline 1');
  });
});
