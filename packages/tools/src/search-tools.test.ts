import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '@infinity-code/sandbox';
import { GREP_LIMITS, LIST_LIMIT } from './index.js';
import { ToolAgent } from './test-support/agent.js';
import { backendsUnderTest, Fixtures, type FileSpec } from './test-support/fixtures.js';

const backends = await backendsUnderTest();

function generated(): Record<string, FileSpec> {
  const files: Record<string, FileSpec> = {};
  // More files than list_files shows, with a match each: more matches than grep shows.
  for (let i = 0; i < LIST_LIMIT + 50; i++) files[`gen/f${String(i).padStart(4, '0')}.txt`] = `generated ${i}\nneedle here\n`;
  return files;
}

describe.each(backends)('list_files and grep (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let repo: string;
  let sb: Sandbox;
  let agent: ToolAgent;
  const call = (name: string, input: Record<string, unknown>) => agent.call(name, input);

  beforeAll(async () => {
    repo = await fx.repo({
      '.gitignore': 'build/\n*.log\n',
      'src/a.ts': 'const a = 1;\n// TODO: rename a\nexport { a };\n',
      'src/b.ts': 'line 1\nline 2\nline 3\nconst todo = "lowercase";\nline 5\nline 6\nline 7\nline 8\nline 9\nTODO again\n',
      'src/c.test.ts': "test('a', () => {}); // TODO test\n",
      'docs/readme.md': '# Docs\nNothing to do here.\n',
      '.github/workflows/ci.yml': 'name: ci # TODO cache\n',
      'many.txt': Array.from({ length: 30 }, (_, i) => `hit ${i + 1}`).join('\n') + '\n',
      'bin.dat': Buffer.from([0, 1, 2, 0x54, 0x4f, 0x44, 0x4f, 0]),
      'link-out': { symlink: '/etc' },
      ...generated(),
    });
    // Ignored files exist in the working tree (and so in the sandbox) without being committed.
    const { writeFiles } = await import('./test-support/fixtures.js');
    await writeFiles(repo, { 'build/out.js': '// TODO built\n', 'debug.log': 'TODO in a log\n' });
    const session = await fx.session(repo, backend);
    sb = await session.create('searcher');
    agent = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo });
  });
  afterAll(async () => {
    await agent.close();
    await fx.cleanup();
  });

  it('list_files lists a directory sorted, skipping ignored files and .git', async () => {
    const r = await call('list_files', { path: 'src' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe('3 files in src:\nsrc/a.ts\nsrc/b.ts\nsrc/c.test.ts');
    expect(r.display).toEqual({ summary: '3 files' });
    const top = await call('list_files', { pattern: '*.{yml,md,js,log}' });
    expect(top.text).toBe('2 files matching *.{yml,md,js,log} in the repository:\n.github/workflows/ci.yml\ndocs/readme.md');
    const all = await call('list_files', {});
    expect(all.text).not.toMatch(/^\.git\//m);
    expect(all.text).not.toContain('build/out.js');
  });

  it('list_files filters by glob and caps long listings with a note', async () => {
    const tests = await call('list_files', { pattern: 'src/**/*.test.ts' });
    expect(tests.text).toBe('1 file matching src/**/*.test.ts in the repository:\nsrc/c.test.ts');
    const many = await call('list_files', { path: 'gen' });
    const listed = many.text.split('\n').filter((l) => l.startsWith('gen/'));
    expect(listed).toHaveLength(LIST_LIMIT);
    expect(listed).toEqual([...listed].sort());
    expect(many.text.split('\n')[0]).toBe(`${LIST_LIMIT + 50} files in gen:`);
    expect(many.text).toContain(`[Showing the first ${LIST_LIMIT} of ${LIST_LIMIT + 50} files. Narrow the listing with path or pattern.]`);
    const none = await call('list_files', { pattern: '*.rs' });
    expect(none.text).toBe('No files matching *.rs in the repository (files ignored by .gitignore are not listed).');
    expect([many.display, none.display]).toEqual([{ summary: `${LIST_LIMIT + 50} files, the first ${LIST_LIMIT} shown` }, { summary: 'no files' }]);
  });

  it('list_files refuses missing directories and paths out of the sandbox', async () => {
    expect((await call('list_files', { path: 'nope' })).text).toContain('"nope" does not exist');
    for (const [p, message] of [
      ['..', 'leaves the repository'],
      ['/etc', 'is an absolute path outside the repository'],
      ['link-out', 'points outside the repository'],
    ] as const) {
      const r = await call('list_files', { path: p });
      expect(r.isError, p).toBe(true);
      expect(r.text, p).toContain(message);
    }
    expect((await call('list_files', { path: `${repo}/src` })).text).toContain('3 files in src:');
  });

  it('grep shows matches with line numbers and context, sorted by file, case-insensitive by default', async () => {
    const r = await call('grep', { query: 'todo', exclude: 'gen/**' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(
      [
        'Found 5 matches for "todo" in 4 files.',
        '',
        '.github/workflows/ci.yml',
        '     1: name: ci # TODO cache',
        '',
        'src/a.ts',
        '     1- const a = 1;',
        '     2: // TODO: rename a',
        '     3- export { a };',
        '',
        'src/b.ts',
        '     2- line 2',
        '     3- line 3',
        '     4: const todo = "lowercase";',
        '     5- line 5',
        '     6- line 6',
        '  --',
        '     8- line 8',
        '     9- line 9',
        '    10: TODO again',
        '',
        'src/c.test.ts',
        "     1: test('a', () => {}); // TODO test",
      ].join('\n'),
    );
  });

  it('grep honours case_sensitive, include and exclude', async () => {
    const cs = await call('grep', { query: 'TODO', case_sensitive: true, include: 'src/**' });
    expect(cs.text.split('\n')[0]).toBe('Found 3 matches for "TODO" in 3 files.');
    expect(cs.display).toEqual({ summary: '3 matches in 3 files' });
    expect(cs.text).not.toContain('lowercase');
    const tsOnly = await call('grep', { query: 'todo', include: '*.ts', exclude: '*.test.ts' });
    expect(tsOnly.text.split('\n')[0]).toBe('Found 3 matches for "todo" in 2 files.');
    expect(tsOnly.text).not.toContain('c.test.ts');
  });

  it('grep caps matches per file and overall, saying so', async () => {
    const perFile = await call('grep', { query: '^hit', include: 'many.txt' });
    expect(perFile.text).toContain(`many.txt (first ${GREP_LIMITS.perFile} matches)`);
    expect(perFile.text.split('\n')[0]).toBe(`Found ${GREP_LIMITS.perFile} matches for "^hit" in 1 file.`);
    const overall = await call('grep', { query: 'needle' });
    expect(overall.text.split('\n')[0]).toBe(
      `Found more than ${GREP_LIMITS.total} matches for "needle"; showing the first ${GREP_LIMITS.total} matches in ${GREP_LIMITS.total} files. Narrow the search with include, exclude or a more specific query.`,
    );
    const files = overall.text.split('\n').filter((l) => l.startsWith('gen/'));
    expect(files).toEqual([...files].sort());
  });

  it('grep says when nothing matches, explains bad regexes, and skips binary and ignored files', async () => {
    const none = await call('grep', { query: 'no such text anywhere' });
    expect(none.isError).toBe(false);
    expect(none.text).toBe('No matches found for "no such text anywhere" (files ignored by .gitignore are not searched).');
    const bad = await call('grep', { query: 'foo(' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^Error: Invalid regular expression "foo\(":/);
    expect(bad.text).toContain('with a backslash to match them literally');
    const ignored = await call('grep', { query: 'TODO (built|in a log)' });
    expect(ignored.text).toContain('No matches found');
    const lookaround = await call('grep', { query: '(?<=// )TODO', case_sensitive: true });
    expect(lookaround.text.split('\n')[0]).toBe('Found 2 matches for "(?<=// )TODO" in 2 files.');
  });

  it('grep searches the sandbox view: edits made in the sandbox are found, the user\'s tree is not searched', async () => {
    await sb.writeFile('src/fresh.ts', 'export const marker = "sandbox-only-marker";\n');
    const r = await call('grep', { query: 'sandbox-only-marker' });
    expect(r.text).toContain('src/fresh.ts\n     1: export const marker = "sandbox-only-marker";');
  });
});
