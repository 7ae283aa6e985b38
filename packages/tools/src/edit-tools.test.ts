import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxSession } from '@infinity-code/sandbox';
import { createCodingTools } from './index.js';
import { ToolAgent } from './test-support/agent.js';
import { backendsUnderTest, Fixtures, PNG_1X1 } from './test-support/fixtures.js';

const backends = await backendsUnderTest();

const SOURCE = `export function add(a: number, b: number): number {
  return a + b;
}

export function sub(a: number, b: number): number {
  return a - b;
}
`;

describe.each(backends)('create_file and edit_file (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let repo: string;
  let session: SandboxSession;
  let sb: Sandbox;
  let agent: ToolAgent;
  const call = (name: string, input: Record<string, unknown>) => agent.call(name, input);

  beforeAll(async () => {
    repo = await fx.repo({
      'src/math.ts': SOURCE,
      'dup.txt': 'x = 1\ny = 2\nx = 1\n',
      'notes.md': '# Notes\ntwo\n',
      'many.txt': Array.from({ length: 12 }, (_, i) => `item ${i + 1}\nfiller`).join('\n') + '\n',
      'img.png': PNG_1X1,
      'link-out': { symlink: '/tmp' },
    });
    session = await fx.session(repo, backend);
    sb = await session.create('editor');
    agent = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo });
  });
  afterAll(async () => {
    await agent.close();
    await fx.cleanup();
  });

  it('create_file creates parent directories, confirms briefly (the diff is for UIs), and leaves the user\'s tree alone', async () => {
    const r = await call('create_file', { path: 'pkg/deep/new.ts', content: 'export const x = 1;\nexport const y = 2;\n' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe('Created pkg/deep/new.ts (2 lines).');
    expect(await sb.readText('pkg/deep/new.ts')).toBe('export const x = 1;\nexport const y = 2;\n');
    expect(r.display).toEqual({
      title: 'Create pkg/deep/new.ts',
      summary: '2 lines',
      diff: '--- /dev/null\n+++ b/pkg/deep/new.ts\n@@ -0,0 +1,2 @@\n+export const x = 1;\n+export const y = 2;',
    });
    await expect(readFile(path.join(repo, 'pkg/deep/new.ts'))).rejects.toThrow(/ENOENT/);
  });

  it('create_file fails when the file exists, pointing to overwrite and edit_file', async () => {
    const r = await call('create_file', { path: 'src/math.ts', content: 'oops' });
    expect(r.isError).toBe(true);
    expect(r.text).toBe(
      'Error: src/math.ts already exists. To replace its whole content pass overwrite: true (read it first, with read_file); ' +
        'to change part of it use edit_file.',
    );
    expect(await sb.readText('src/math.ts')).toBe(SOURCE);
    const dir = await call('create_file', { path: 'src', content: 'x' });
    expect(dir.text).toContain('"src" is an existing directory');
    expect((await call('create_file', { path: 'src', content: 'x', overwrite: true })).text).toContain('"src" is an existing directory');
    const underFile = await call('create_file', { path: 'src/math.ts/inner.ts', content: 'x' });
    expect(underFile.isError).toBe(true);
    expect(underFile.text).toContain('a parent of it is a file');
  });

  it('create_file refuses paths out of the sandbox and into .git', async () => {
    for (const [p, message] of [
      ['../escape.txt', 'leaves the repository through ".."'],
      ['/tmp/escape.txt', 'is an absolute path outside the repository'],
      ['link-out/escape.txt', 'points outside the repository'],
      ['.git/hooks/pre-commit', 'is inside .git'],
    ] as const) {
      const r = await call('create_file', { path: p, content: 'x' });
      expect(r.isError, p).toBe(true);
      expect(r.text, p).toContain(message);
    }
  });

  it('edit_file and create_file refuse a symlink that leads into .git, which stays as it was', async () => {
    expect((await sb.run('ln -sf .git/config git-config && ln -sfn .git/hooks git-hooks')).exitCode).toBe(0);
    const config = await sb.readText('.git/config');
    // replace_all: the sandbox's config may hold several [core] sections; the write is what is refused.
    const edit = await call('edit_file', { path: 'git-config', old_str: '[core]', new_str: '[core]\n\tfsmonitor = /tmp/run-me', replace_all: true });
    expect(edit.isError).toBe(true);
    expect(edit.text).toContain(".git directory (to .git/config)");
    const create = await call('create_file', { path: 'git-hooks/pre-commit', content: '#!/bin/sh\n' });
    expect(create.isError).toBe(true);
    expect(create.text).toContain('.git directory (to .git/hooks/pre-commit)');
    expect(await sb.readText('.git/config')).toBe(config);
    expect(await sb.exists('.git/hooks/pre-commit')).toBe(false);
    expect((await sb.run('rm git-config git-hooks')).exitCode).toBe(0);
  });

  it('edit_file replaces a unique exact match and confirms with the changed lines and a few around them', async () => {
    const r = await call('edit_file', { path: 'src/math.ts', old_str: '  return a + b;', new_str: '  const sum = a + b;\n  return sum;' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(
      [
        'Edited src/math.ts at lines 2-3 (+2 -1):',
        '     1\texport function add(a: number, b: number): number {',
        '     2\t  const sum = a + b;',
        '     3\t  return sum;',
        '     4\t}',
        '     5\t',
        '     6\texport function sub(a: number, b: number): number {',
      ].join('\n'),
    );
    expect(await sb.readText('src/math.ts')).toContain('  const sum = a + b;\n  return sum;\n}');
    // UIs get the whole diff as data; the model's text doesn't carry it.
    expect(r.display).toEqual({
      title: 'Edit src/math.ts',
      summary: '+2 -1',
      diff: [
        '--- a/src/math.ts',
        '+++ b/src/math.ts',
        '@@ -1,5 +1,6 @@',
        ' export function add(a: number, b: number): number {',
        '-  return a + b;',
        '+  const sum = a + b;',
        '+  return sum;',
        ' }',
        ' ',
        ' export function sub(a: number, b: number): number {',
      ].join('\n'),
    });
  });

  it('edit_file falls back to a whitespace-tolerant line match, re-indenting the replacement', async () => {
    const r = await call('edit_file', {
      path: 'src/math.ts',
      old_str: 'export function sub(a: number, b: number): number {\nreturn a - b;   \n}\n',
      new_str: 'export function sub(a: number, b: number): number {\nreturn b - a;\n}\n',
    });
    expect(r.isError).toBe(false);
    expect(r.text.split('\n')[0]).toBe('Edited src/math.ts at lines 6-8 (+1 -1; old_str matched ignoring leading and trailing whitespace):');
    expect(r.text).toContain('     7\treturn b - a;\n     8\t}');
    expect(r.display).toMatchObject({ title: 'Edit src/math.ts', summary: '+1 -1, matched ignoring indentation' });
    expect((r.display as { diff: string }).diff).toContain('-  return a - b;\n+return b - a;');
    expect(await sb.readText('src/math.ts')).toMatch(/return b - a;\n}\n$/);
  });

  it('re-indents a whitespace match whose old_str lost the file\'s indentation', async () => {
    await sb.writeFile('indent.py', 'def f():\n    if x:\n        return 1\n    return 2\n');
    const r = await call('edit_file', { path: 'indent.py', old_str: 'if x:\n    return 1', new_str: 'if y:\n    return 3' });
    expect(r.isError).toBe(false);
    expect(await sb.readText('indent.py')).toBe('def f():\n    if y:\n        return 3\n    return 2\n');
  });

  it('edit_file errors name the number of matches, or say it was not found', async () => {
    const dup = await call('edit_file', { path: 'dup.txt', old_str: 'x = 1', new_str: 'x = 3' });
    expect(dup.isError).toBe(true);
    expect(dup.text).toBe(
      'Error: old_str matches 2 places in dup.txt (exactly); it must match exactly one. Include more surrounding ' +
        'lines in old_str so that it identifies a single place, or pass replace_all: true to replace every one.',
    );
    const dupWs = await call('edit_file', { path: 'dup.txt', old_str: '  x = 1  \n', new_str: 'x = 3' });
    expect(dupWs.text).toContain('old_str matches 2 places in dup.txt (when leading and trailing whitespace is ignored)');
    const none = await call('edit_file', { path: 'dup.txt', old_str: 'z = 9', new_str: 'z = 0' });
    expect(none.isError).toBe(true);
    expect(none.text).toContain('old_str not found in dup.txt');
    expect(await sb.readText('dup.txt')).toBe('x = 1\ny = 2\nx = 1\n');
  });

  it('edit_file refuses missing files, binary files, empty and no-op edits, and escapes', async () => {
    const missing = await call('edit_file', { path: 'src/none.ts', old_str: 'a', new_str: 'b' });
    expect(missing.text).toBe('Error: src/none.ts does not exist. Use create_file to create it, or list_files to find the right path.');
    const img = await call('edit_file', { path: 'img.png', old_str: 'PNG', new_str: 'JPG' });
    expect(img.text).toContain('"img.png" is not a text file (an image)');
    const empty = await call('edit_file', { path: 'dup.txt', old_str: '', new_str: 'b' });
    expect(empty.text).toContain('old_str is empty');
    const same = await call('edit_file', { path: 'dup.txt', old_str: 'y = 2', new_str: 'y = 2' });
    expect(same.text).toContain('identical');
    const escape = await call('edit_file', { path: '../dup.txt', old_str: 'a', new_str: 'b' });
    expect(escape.text).toContain('leaves the repository');
    const abs = await call('edit_file', { path: `${repo}/dup.txt`, old_str: 'y = 2', new_str: 'y = 5' });
    expect(abs.isError).toBe(false);
    expect(await sb.readText('dup.txt')).toBe('x = 1\ny = 5\nx = 1\n');
  });

  it('create_file with overwrite replaces an existing file, saying how long it was', async () => {
    const r = await call('create_file', { path: 'notes.md', content: 'one\ntwo\nthree\n', overwrite: true });
    expect(r.isError).toBe(false);
    expect(r.text).toBe('Overwrote notes.md (3 lines, was 2).');
    expect(await sb.readText('notes.md')).toBe('one\ntwo\nthree\n');
    expect(r.display).toEqual({
      title: 'Overwrite notes.md',
      summary: '3 lines, +2 -1',
      diff: '--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,3 @@\n-# Notes\n+one\n two\n+three',
    });
    // overwrite on a file that doesn't exist just creates it.
    expect((await call('create_file', { path: 'fresh.md', content: 'x\n', overwrite: true })).text).toBe('Created fresh.md (1 line).');
    // A binary file replaced: its size instead of a line count, and no diff for UIs.
    const img = await call('create_file', { path: 'img.png', content: 'not an image any more\n', overwrite: true });
    expect(img.text).toBe(`Overwrote img.png (1 line, was ${PNG_1X1.length} bytes of image data).`);
    expect(img.display).toEqual({ title: 'Overwrite img.png', summary: '1 line' });
    await sb.writeFile('img.png', PNG_1X1);
    await sb.remove('fresh.md');
  });

  it('edit_file with replace_all replaces every match and names where they landed', async () => {
    const r = await call('edit_file', { path: 'many.txt', old_str: 'item', new_str: 'entry', replace_all: true });
    expect(r.isError).toBe(false);
    expect(r.text.split('\n')[0]).toBe('Edited many.txt: 12 replacements, at lines 1, 3, 5, 7, 9, 11, 13, 15, 17, 19 and 2 more (+12 -12):');
    expect(await sb.readText('many.txt')).not.toContain('item');
    expect(r.display).toMatchObject({ title: 'Edit many.txt', summary: '12 replacements, +12 -12' });
    // The snippet shows the edited places with the lines around them, numbered as read_file numbers them.
    expect(r.text).toContain('     1\tentry 1\n     2\tfiller\n     3\tentry 2');
    // Without replace_all the same call fails, saying how many places match and what to do.
    const again = await call('edit_file', { path: 'many.txt', old_str: 'entry', new_str: 'item' });
    expect(again.text).toBe(
      'Error: old_str matches 12 places in many.txt (exactly); it must match exactly one. Include more surrounding lines in ' +
        'old_str so that it identifies a single place, or pass replace_all: true to replace every one.',
    );
  });

  it('edit_file shows the ends of a long replacement, and the place of a deletion', async () => {
    const long = Array.from({ length: 30 }, (_, i) => `new ${i + 1}`).join('\n');
    const r = await call('edit_file', { path: 'src/math.ts', old_str: '  const sum = a + b;\n', new_str: `${long}\n` });
    expect(r.text).toBe(
      [
        'Edited src/math.ts at lines 2-31 (+30 -1):',
        '     1\texport function add(a: number, b: number): number {',
        '     2\tnew 1',
        '     3\tnew 2',
        '     4\tnew 3',
        '     5\tnew 4',
        '[... lines 6-27 as written ...]',
        '    28\tnew 27',
        '    29\tnew 28',
        '    30\tnew 29',
        '    31\tnew 30',
        '    32\t  return sum;',
        '    33\t}',
        '    34\t',
      ].join('\n'),
    );
    const del = await call('edit_file', { path: 'src/math.ts', old_str: `${long}\n`, new_str: '' });
    expect(del.text).toBe(
      [
        'Edited src/math.ts at line 2 (+0 -30):',
        '     1\texport function add(a: number, b: number): number {',
        '     2\t  return sum;',
        '     3\t}',
        '     4\t',
        '     5\texport function sub(a: number, b: number): number {',
      ].join('\n'),
    );
    expect((await call('edit_file', { path: 'src/math.ts', old_str: 'export function add', new_str: 'export function plus' })).text.split('\n')[0]).toBe(
      'Edited src/math.ts at line 1 (+1 -1):',
    );
  });

  it('edits show in the sandbox diff only, never in the working tree', async () => {
    const diff = await sb.diff();
    expect(diff.files.map((f) => f.path).sort()).toEqual(['dup.txt', 'indent.py', 'many.txt', 'notes.md', 'pkg/deep/new.ts', 'src/math.ts']);
    expect(await readFile(path.join(repo, 'src/math.ts'), 'utf8')).toBe(SOURCE);
  });

  it('declares display lines from the input', () => {
    const tools = createCodingTools({ sandboxFor: async () => sb });
    const display = (name: string, input: Record<string, unknown>) => tools.find((t) => t.name === name)!.display!(input);
    expect(display('edit_file', { path: 'src/a.ts', old_str: 'a\n', new_str: 'b\nc\nd\n' })).toBe('Edit src/a.ts (+3 -1)');
    expect(display('edit_file', { path: 'src/a.ts', old_str: 'a', new_str: 'b', replace_all: true })).toBe('Edit src/a.ts (+1 -1, every match)');
    expect(display('create_file', { path: 'x.ts', content: 'a\nb\n' })).toBe('Create x.ts (2 lines)');
    expect(display('create_file', { path: 'x.ts', content: 'a\n', overwrite: true })).toBe('Write x.ts (1 line)');
    expect(display('read_file', { path: 'src/a.ts', start_line: 10, end_line: 40 })).toBe('Read src/a.ts:10-40');
    expect(display('read_file', { path: 'src/a.ts', offset: 10, limit: 31 })).toBe('Read src/a.ts:10-40');
    expect(display('read_file', { path: 'src/a.ts', offset: 0, limit: 5 })).toBe('Read src/a.ts:1-5');
    expect(display('read_file', { path: 'src/a.ts' })).toBe('Read src/a.ts');
    expect(display('execute_command', { command: 'npm test' })).toBe('$ npm test');
    expect(display('list_files', { pattern: '*.ts' })).toBe('List . *.ts');
    expect(display('grep', { pattern: 'TODO', glob: '*.ts' })).toBe('Grep "TODO" in *.ts');
    expect(display('grep', { pattern: 'TODO', path: 'src', include: '*.ts', type: 'ts' })).toBe('Grep "TODO" in src *.ts type ts');
  });
});
