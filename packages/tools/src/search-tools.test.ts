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
      'wide.txt': Array.from({ length: 100 }, () => `wide ${'x'.repeat(400)}`).join('\n') + '\n',
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

  it('grep lists the matching files by default, sorted by path, case-sensitive unless -i', async () => {
    const r = await call('grep', { pattern: 'TODO', exclude: 'gen/**' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(['Found 4 files.', '.github/workflows/ci.yml', 'src/a.ts', 'src/b.ts', 'src/c.test.ts'].join('\n'));
    expect(r.display).toEqual({ summary: '4 files' });
    // Case-sensitive by default: "todo" is only in src/b.ts; -i finds the TODOs too.
    expect((await call('grep', { pattern: 'todo', exclude: 'gen/**' })).text).toBe('Found 1 file.\nsrc/b.ts');
    const ci = await call('grep', { pattern: 'todo', '-i': true, glob: 'src/**' });
    expect(ci.text).toBe('Found 3 files.\nsrc/a.ts\nsrc/b.ts\nsrc/c.test.ts');
  });

  it('grep content mode shows matching lines as N:line under each file, with -A/-B/-C context as N-line', async () => {
    const plain = await call('grep', { pattern: 'TODO', output_mode: 'content', exclude: 'gen/**' });
    expect(plain.text).toBe(
      [
        'Found 4 matching lines in 4 files.',
        '.github/workflows/ci.yml',
        '1:name: ci # TODO cache',
        '',
        'src/a.ts',
        '2:// TODO: rename a',
        '',
        'src/b.ts',
        '10:TODO again',
        '',
        'src/c.test.ts',
        "1:test('a', () => {}); // TODO test",
      ].join('\n'),
    );
    expect(plain.display).toEqual({ summary: '4 matching lines in 4 files' });
    const ctx = await call('grep', { pattern: 'todo', '-i': true, output_mode: 'content', path: 'src/b.ts', '-C': 2 });
    expect(ctx.text).toBe(
      [
        'Found 2 matching lines in 1 file.',
        'src/b.ts',
        '2-line 2',
        '3-line 3',
        '4:const todo = "lowercase";',
        '5-line 5',
        '6-line 6',
        '--',
        '8-line 8',
        '9-line 9',
        '10:TODO again',
      ].join('\n'),
    );
    const after = await call('grep', { pattern: 'todo', output_mode: 'content', path: 'src/b.ts', '-A': 1, '-B': 0 });
    expect(after.text).toBe('Found 1 matching line in 1 file.\nsrc/b.ts\n4:const todo = "lowercase";\n5-line 5');
    const bare = await call('grep', { pattern: 'TODO', output_mode: 'content', path: 'src/a.ts', '-n': false });
    expect(bare.text).toBe('Found 1 matching line in 1 file.\nsrc/a.ts\n// TODO: rename a');
    // Context only applies to content mode.
    expect((await call('grep', { pattern: 'todo', path: 'src/b.ts', '-C': 3 })).text).toBe('Found 1 file.\nsrc/b.ts');
  });

  it('grep count mode gives matching lines per file', async () => {
    const r = await call('grep', { pattern: 'TODO', output_mode: 'count', '-i': true, glob: '*.ts' });
    expect(r.text).toBe('Found 4 matching lines in 3 files.\nsrc/a.ts:1\nsrc/b.ts:2\nsrc/c.test.ts:1');
    expect(r.display).toEqual({ summary: '4 matching lines in 3 files' });
    const one = await call('grep', { pattern: 'hit', output_mode: 'count', path: 'many.txt' });
    expect(one.text).toBe('Found 30 matching lines in 1 file.\nmany.txt:30');
  });

  it('grep filters by path, glob (include is the same), exclude and type', async () => {
    expect((await call('grep', { pattern: 'TODO', path: 'src' })).text).toBe('Found 3 files.\nsrc/a.ts\nsrc/b.ts\nsrc/c.test.ts');
    expect((await call('grep', { pattern: 'TODO', path: `${repo}/src/a.ts` })).text).toBe('Found 1 file.\nsrc/a.ts');
    expect((await call('grep', { pattern: 'TODO', glob: '*.ts', exclude: '*.test.ts' })).text).toBe('Found 2 files.\nsrc/a.ts\nsrc/b.ts');
    expect((await call('grep', { pattern: 'TODO', include: '*.{yml,md}' })).text).toBe('Found 1 file.\n.github/workflows/ci.yml');
    expect((await call('grep', { pattern: 'TODO', type: 'yaml' })).text).toBe('Found 1 file.\n.github/workflows/ci.yml');
    expect((await call('grep', { pattern: 'Nothing', type: 'md', path: 'docs' })).text).toBe('Found 1 file.\ndocs/readme.md');
    const badType = await call('grep', { pattern: 'x', type: 'klingon' });
    expect(badType.isError).toBe(true);
    expect(badType.text).toContain('Unknown file type "klingon"');
    const missing = await call('grep', { pattern: 'x', path: 'nope' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('"nope" does not exist');
    const out = await call('grep', { pattern: 'x', path: '../' });
    expect(out.text).toContain('leaves the repository');
  });

  it('grep is bounded by default, says how many more there are, and pages with head_limit and offset', async () => {
    const total = LIST_LIMIT + 50;
    const files = await call('grep', { pattern: 'needle' });
    const listed = files.text.split('\n').filter((l) => l.startsWith('gen/'));
    expect(listed).toHaveLength(GREP_LIMITS.defaultHead);
    expect(listed).toEqual([...listed].sort());
    expect(listed[0]).toBe('gen/f0000.txt');
    expect(files.text.split('\n')[0]).toBe(`Found ${total} files.`);
    expect(files.text.split('\n').at(-1)).toBe(
      `[Showing files 1-${GREP_LIMITS.defaultHead} of ${total}. ${total - GREP_LIMITS.defaultHead} more: pass offset=${GREP_LIMITS.defaultHead} ` +
        'to see them, or narrow the search with path, glob, type or a more specific pattern.]',
    );
    expect(files.display).toEqual({ summary: `${total} files, ${GREP_LIMITS.defaultHead} shown` });
    const page = await call('grep', { pattern: 'needle', head_limit: 3, offset: 1040 });
    expect(page.text).toBe(
      `Found ${total} files.\ngen/f1040.txt\ngen/f1041.txt\ngen/f1042.txt\n` +
        `[Showing files 1041-1043 of ${total}. 7 more: pass offset=1043 to see them, or narrow the search with path, glob, type or a more specific pattern.]`,
    );
    const last = await call('grep', { pattern: 'needle', offset: 1048 });
    expect(last.text).toBe(`Found ${total} files.\ngen/f1048.txt\ngen/f1049.txt\n[Showing files 1049-1050 of ${total}.]`);
    const past = await call('grep', { pattern: 'needle', offset: 5000 });
    expect(past.text).toBe(`Found ${total} files.\n[offset 5000 is past the end: there are ${total} files.]`);

    const lines = await call('grep', { pattern: '^hit', output_mode: 'content', head_limit: 5 });
    expect(lines.text).toBe(
      'Found 30 matching lines in 1 file.\nmany.txt\n1:hit 1\n2:hit 2\n3:hit 3\n4:hit 4\n5:hit 5\n' +
        '[Showing lines 1-5 of 30. 25 more: pass offset=5 to see them, or narrow the search with path, glob, type or a more specific pattern.]',
    );
    const next = await call('grep', { pattern: '^hit', output_mode: 'content', head_limit: 2, offset: 28 });
    expect(next.text).toBe('Found 30 matching lines in 1 file.\nmany.txt\n29:hit 29\n30:hit 30\n[Showing lines 29-30 of 30.]');
    const counts = await call('grep', { pattern: 'needle', output_mode: 'count', head_limit: 1 });
    expect(counts.text.split('\n').slice(0, 2)).toEqual([`Found ${total} matching lines in ${total} files.`, 'gen/f0000.txt:1']);
    expect(counts.text).toContain(`[Showing files 1-1 of ${total}. ${total - 1} more: pass offset=1`);
  });

  it('grep keeps a call under a character budget, saying how to read on', async () => {
    const wide = await call('grep', { pattern: 'wide', output_mode: 'content' });
    expect(wide.text.length).toBeLessThan(GREP_LIMITS.maxChars + 500);
    const shown = wide.text.split('\n').filter((l) => /^\d+:/.test(l)).length;
    expect(shown).toBeGreaterThan(10);
    expect(shown).toBeLessThan(100);
    expect(wide.text.split('\n').at(-1)).toBe(
      `[Showing lines 1-${shown} of 100. ${100 - shown} more: pass offset=${shown} to see them, or narrow the search with path, glob, type or a more specific pattern.]`,
    );
    // Long lines are cut, saying how much.
    expect(wide.text).toMatch(/^1:wide x+… \[\d+ more characters\]$/m);
    // An explicit head_limit allows more, still within a bound.
    const more = await call('grep', { pattern: 'wide', output_mode: 'content', head_limit: 100 });
    expect(more.text).toContain('\n100:wide');
    expect(more.text.length).toBeLessThan(GREP_LIMITS.maxCharsWithHead);
  });

  it('grep matches across lines with multiline', async () => {
    const single = await call('grep', { pattern: 'rename a\\nexport', path: 'src' });
    expect(single.text).toContain('No matches found for "rename a\\\\nexport" in src');
    const multi = await call('grep', { pattern: 'rename a.export', path: 'src', multiline: true, output_mode: 'content' });
    expect(multi.text).toBe('Found 1 matching line in 1 file.\nsrc/a.ts\n2:// TODO: rename a\n3:export { a };');
    // A line break in the pattern itself needs multiline too.
    const literal = await call('grep', { pattern: 'rename a\nexport', path: 'src' });
    expect(literal.isError).toBe(true);
    expect(literal.text).toBe('Error: The pattern contains a line break, which only matches with multiline: true.');
    expect((await call('grep', { pattern: 'rename a\nexport', path: 'src', multiline: true })).text).toBe('Found 1 file.\nsrc/a.ts');
  });

  it('grep says when nothing matches, explains bad regexes, and skips binary and ignored files', async () => {
    const none = await call('grep', { pattern: 'no such text anywhere' });
    expect(none.isError).toBe(false);
    expect(none.text).toBe('No matches found for "no such text anywhere" (files ignored by .gitignore are not searched).');
    expect(none.display).toEqual({ summary: 'no matches' });
    const bad = await call('grep', { pattern: 'foo(' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^Error: Invalid regular expression "foo\(":/);
    expect(bad.text).toContain('with a backslash to match them literally');
    const ignored = await call('grep', { pattern: 'TODO (built|in a log)' });
    expect(ignored.text).toContain('No matches found');
    const lookaround = await call('grep', { pattern: '(?<=// )TODO', output_mode: 'content' });
    expect(lookaround.text.split('\n')[0]).toBe('Found 2 matching lines in 2 files.');
    // The schema presents pattern: the old name is refused, saying what is accepted.
    const old = await call('grep', { query: 'TODO' });
    expect(old.isError).toBe(true);
    expect(old.text).toContain('Missing required property "pattern" (string).');
    expect(old.text).toContain('Unknown property "query" (accepted: pattern, path, glob, type, output_mode,');
  });

  it('grep searches the sandbox view: edits made in the sandbox are found, the user\'s tree is not searched', async () => {
    await sb.writeFile('src/fresh.ts', 'export const marker = "sandbox-only-marker";\n');
    const r = await call('grep', { pattern: 'sandbox-only-marker', output_mode: 'content' });
    expect(r.text).toContain('src/fresh.ts\n1:export const marker = "sandbox-only-marker";');
  });
});
