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

  it('create_file creates parent directories, shows a diff, and leaves the user\'s tree alone', async () => {
    const r = await call('create_file', { path: 'pkg/deep/new.ts', content: 'export const x = 1;\nexport const y = 2;\n' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(
      'Created file pkg/deep/new.ts (2 lines).\n\n--- /dev/null\n+++ b/pkg/deep/new.ts\n@@ -0,0 +1,2 @@\n+export const x = 1;\n+export const y = 2;',
    );
    expect(await sb.readText('pkg/deep/new.ts')).toBe('export const x = 1;\nexport const y = 2;\n');
    expect(r.display).toEqual({
      title: 'Create pkg/deep/new.ts',
      summary: '2 lines',
      diff: '--- /dev/null\n+++ b/pkg/deep/new.ts\n@@ -0,0 +1,2 @@\n+export const x = 1;\n+export const y = 2;',
    });
    await expect(readFile(path.join(repo, 'pkg/deep/new.ts'))).rejects.toThrow(/ENOENT/);
  });

  it('create_file fails when the file exists and points to edit_file', async () => {
    const r = await call('create_file', { path: 'src/math.ts', content: 'oops' });
    expect(r.isError).toBe(true);
    expect(r.text).toBe('Error: src/math.ts already exists. Use edit_file to change it (read_file shows its content).');
    expect(await sb.readText('src/math.ts')).toBe(SOURCE);
    const dir = await call('create_file', { path: 'src', content: 'x' });
    expect(dir.text).toContain('"src" is an existing directory');
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
    const edit = await call('edit_file', { path: 'git-config', old_str: '[core]', new_str: '[core]\n\tfsmonitor = /tmp/run-me' });
    expect(edit.isError).toBe(true);
    expect(edit.text).toContain(".git directory (to .git/config)");
    const create = await call('create_file', { path: 'git-hooks/pre-commit', content: '#!/bin/sh\n' });
    expect(create.isError).toBe(true);
    expect(create.text).toContain('.git directory (to .git/hooks/pre-commit)');
    expect(await sb.readText('.git/config')).toBe(config);
    expect(await sb.exists('.git/hooks/pre-commit')).toBe(false);
    expect((await sb.run('rm git-config git-hooks')).exitCode).toBe(0);
  });

  it('edit_file replaces a unique exact match and returns a unified diff', async () => {
    const r = await call('edit_file', { path: 'src/math.ts', old_str: '  return a + b;', new_str: '  const sum = a + b;\n  return sum;' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(
      [
        'Replaced text in src/math.ts (+2 -1).',
        '',
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
    );
    expect(await sb.readText('src/math.ts')).toContain('  const sum = a + b;\n  return sum;\n}');
    // UIs get the change and its diff as data, not inside the model's text.
    expect(r.display).toEqual({ title: 'Edit src/math.ts', summary: '+2 -1', diff: r.text.slice(r.text.indexOf('--- a/')) });
  });

  it('edit_file falls back to a whitespace-tolerant line match, re-indenting the replacement', async () => {
    const r = await call('edit_file', {
      path: 'src/math.ts',
      old_str: 'export function sub(a: number, b: number): number {\nreturn a - b;   \n}\n',
      new_str: 'export function sub(a: number, b: number): number {\nreturn b - a;\n}\n',
    });
    expect(r.isError).toBe(false);
    expect(r.text).toContain('Replaced text in src/math.ts (matched ignoring leading and trailing whitespace) (+1 -1).');
    expect(r.text).toContain('-  return a - b;\n+return b - a;');
    expect(r.display).toMatchObject({ title: 'Edit src/math.ts', summary: '+1 -1, matched ignoring indentation' });
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
      'Error: old_str matches 2 locations in dup.txt (exactly); it must match exactly one. Include more surrounding ' +
        'lines in old_str so that it identifies a single place, then try again.',
    );
    const dupWs = await call('edit_file', { path: 'dup.txt', old_str: '  x = 1  \n', new_str: 'x = 3' });
    expect(dupWs.text).toContain('old_str matches 2 locations in dup.txt (when leading and trailing whitespace is ignored)');
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

  it('edits show in the sandbox diff only, never in the working tree', async () => {
    const diff = await sb.diff();
    expect(diff.files.map((f) => f.path).sort()).toEqual(['dup.txt', 'indent.py', 'pkg/deep/new.ts', 'src/math.ts']);
    expect(await readFile(path.join(repo, 'src/math.ts'), 'utf8')).toBe(SOURCE);
  });

  it('declares display lines from the input', () => {
    const tools = createCodingTools({ sandboxFor: async () => sb });
    const display = (name: string, input: Record<string, unknown>) => tools.find((t) => t.name === name)!.display!(input);
    expect(display('edit_file', { path: 'src/a.ts', old_str: 'a\n', new_str: 'b\nc\nd\n' })).toBe('Edit src/a.ts (+3 -1)');
    expect(display('create_file', { path: 'x.ts', content: 'a\nb\n' })).toBe('Create x.ts (2 lines)');
    expect(display('read_file', { path: 'src/a.ts', start_line: 10, end_line: 40 })).toBe('Read src/a.ts:10-40');
    expect(display('read_file', { path: 'src/a.ts' })).toBe('Read src/a.ts');
    expect(display('execute_command', { command: 'npm test' })).toBe('$ npm test');
    expect(display('list_files', { pattern: '*.ts' })).toBe('List . *.ts');
    expect(display('grep', { query: 'TODO', include: '*.ts' })).toBe('Grep "TODO" in *.ts');
  });
});
