// The project's instructions in the system prompt: which files at the root (AGENTS.md or
// CLAUDE.md, then CLAUDE.local.md), their @imports (bounded, inside the repository only), and how
// a session keeps them, files kept by earlier versions included. Real temporary git repositories.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INSTRUCTION_LIMITS } from '@infinity-code/tools';
import { importsOf } from '@infinity-code/tools/instruction-files';
import { basePrompt, projectInstructions, sessionInstructions } from './instructions.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(d);
  return d;
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'ignore' });

function repoWith(files: Record<string, string | { symlink: string }>): string {
  const root = temp('ic-instr-');
  execFileSync('git', ['init', '-q', root]);
  for (const [rel, spec] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    if (typeof spec === 'string') writeFileSync(p, spec);
    else symlinkSync(spec.symlink, p);
  }
  return root;
}

const texts = (root: string) => projectInstructions(root)?.files.map((f) => [f.file, f.text]);

describe('the instruction files at the root', () => {
  it('reads AGENTS.md rather than CLAUDE.md, then CLAUDE.local.md', () => {
    const root = repoWith({ 'AGENTS.md': 'Agents rules.\n', 'CLAUDE.md': 'Claude rules.\n', 'CLAUDE.local.md': 'My own notes.\n' });
    expect(texts(root)).toEqual([
      ['AGENTS.md', 'Agents rules.'],
      ['CLAUDE.local.md', 'My own notes.'],
    ]);
    const prompt = basePrompt(root);
    expect(prompt).toContain('Project instructions (from AGENTS.md):\n\nAgents rules.');
    expect(prompt).toContain('Local project instructions (from CLAUDE.local.md):\n\nMy own notes.');
    expect(prompt.indexOf('Agents rules.')).toBeLessThan(prompt.indexOf('My own notes.'));
    expect(prompt).not.toContain('Claude rules.');
  });

  it('reads CLAUDE.md where there is no AGENTS.md; none of them, no instructions', () => {
    expect(texts(repoWith({ 'CLAUDE.md': 'Claude rules.' }))).toEqual([['CLAUDE.md', 'Claude rules.']]);
    expect(texts(repoWith({ 'CLAUDE.local.md': 'Only mine.' }))).toEqual([['CLAUDE.local.md', 'Only mine.']]);
    expect(projectInstructions(repoWith({ 'README.md': 'hi' }))).toBeUndefined();
    // An empty AGENTS.md is the project's choice: CLAUDE.md is not read instead.
    expect(projectInstructions(repoWith({ 'AGENTS.md': '\n', 'CLAUDE.md': 'Claude rules.' }))).toBeUndefined();
  });

  it('a lone AGENTS.md gives the prompt it always gave', () => {
    const root = repoWith({ 'AGENTS.md': 'Use tabs.\n' });
    expect(basePrompt(root).endsWith(`The repository is at ${root}.\n\nProject instructions (from AGENTS.md):\n\nUse tabs.`)).toBe(true);
  });

  it('--system-prompt stands for our instructions, --append-system-prompt goes last; the environment and the project stay', () => {
    const root = repoWith({ 'AGENTS.md': 'Use tabs.\n' });
    const ours = basePrompt(root, undefined, 'Environment facts.');
    const replaced = basePrompt(root, undefined, 'Environment facts.', { replace: 'You are a terse reviewer.' });
    expect(replaced).toBe('You are a terse reviewer.\n\nEnvironment facts.\n\nProject instructions (from AGENTS.md):\n\nUse tabs.');
    expect(ours.startsWith('You are Infinity Code')).toBe(true);
    const appended = basePrompt(root, undefined, 'Environment facts.', { append: 'Answer in French.' });
    expect(appended).toBe(`${ours}\n\nAnswer in French.`);
    expect(basePrompt(root, undefined, 'Environment facts.', { replace: 'Terse.', append: 'French.' })).toBe(
      'Terse.\n\nEnvironment facts.\n\nProject instructions (from AGENTS.md):\n\nUse tabs.\n\nFrench.',
    );
    // Empty flags add no blank paragraph.
    expect(basePrompt(root, undefined, 'Environment facts.', { replace: '', append: '' })).toBe(
      'Environment facts.\n\nProject instructions (from AGENTS.md):\n\nUse tabs.',
    );
  });
});

describe('@imports', () => {
  it('are read relative to the importing file and follow it, each once, depth first', () => {
    const root = repoWith({
      'AGENTS.md': 'Follow @docs/style.md and @docs/testing.md.\nAgain: @docs/style.md\n',
      'docs/style.md': 'Style: two spaces. Names: @naming.md\n',
      'docs/naming.md': 'camelCase.\n',
      'docs/testing.md': 'Run the tests.\n',
    });
    expect(texts(root)).toEqual([
      [
        'AGENTS.md',
        'Follow @docs/style.md and @docs/testing.md.\nAgain: @docs/style.md\n\n' +
          '<imported file="docs/style.md">\nStyle: two spaces. Names: @naming.md\n\n<imported file="docs/naming.md">\ncamelCase.\n</imported>\n</imported>\n\n' +
          '<imported file="docs/testing.md">\nRun the tests.\n</imported>',
      ],
    ]);
  });

  it('stop five levels down, and a cycle ends where it comes back', () => {
    const files: Record<string, string> = { 'AGENTS.md': 'Level 0 @l1.md' };
    for (let i = 1; i <= 7; i++) files[`l${i}.md`] = `Level ${i} @l${i + 1}.md`;
    const deep = projectInstructions(repoWith(files))!.files[0].text;
    for (let i = 0; i <= INSTRUCTION_LIMITS.maxDepth; i++) expect(deep).toContain(`Level ${i} `);
    expect(deep).not.toContain(`Level ${INSTRUCTION_LIMITS.maxDepth + 1} `);

    const cycle = projectInstructions(repoWith({ 'AGENTS.md': 'A @b.md', 'b.md': 'B @c.md', 'c.md': 'C @b.md @AGENTS.md' }))!.files[0].text;
    expect(cycle).toBe('A @b.md\n\n<imported file="b.md">\nB @c.md\n\n<imported file="c.md">\nC @b.md @AGENTS.md\n</imported>\n</imported>');
  });

  it('leave code alone, and missing files as written', () => {
    const root = repoWith({
      'AGENTS.md': [
        'Use `@fenced.md` in a span, and ``@span.md`` too.',
        '```ts',
        '@fenced.md',
        '```',
        '~~~',
        '@fenced.md',
        '~~~',
        'See @missing.md, and @real.md.',
        'Mail me@real.md.',
      ].join('\n'),
      'fenced.md': 'FENCED',
      'span.md': 'SPAN',
      'real.md': 'REAL',
    });
    const text = projectInstructions(root)!.files[0].text;
    expect(text).toContain('See @missing.md, and @real.md.');
    // The sentence's full stop is not part of the name.
    expect(text).toContain('<imported file="real.md">\nREAL\n</imported>');
    expect(text).not.toContain('FENCED');
    expect(text).not.toContain('SPAN');
    expect(importsOf('a @x.md\n```\n@y.md\n```\n`@z.md` @w')).toEqual(['x.md', 'w']);
  });

  it('never read outside the repository: not the home, not through .., not through a link, not .git', () => {
    const outside = temp('ic-instr-outside-');
    writeFileSync(join(outside, 'secret.md'), 'OUTSIDE SECRET');
    const root = repoWith({
      'AGENTS.md': [
        '@~/secret.md',
        `@../${outside.split('/').pop()}/secret.md`,
        `@${outside}/secret.md`,
        '@link-out.md',
        '@dir-out/secret.md',
        '@.git/config',
        '@.infinity/config.json',
        '@inside-link.md',
      ].join('\n'),
      '~/secret.md': 'TILDE DIR IN THE REPO',
      'link-out.md': { symlink: join(outside, 'secret.md') },
      'dir-out': { symlink: outside },
      '.infinity/config.json': '{"INFINITY": true}',
      'inside.md': 'INSIDE',
      'inside-link.md': { symlink: 'inside.md' },
    });
    const text = projectInstructions(root)!.files[0].text;
    expect(text).not.toContain('SECRET');
    expect(text).not.toContain('TILDE');
    expect(text).not.toContain('[core]');
    expect(text).not.toContain('INFINITY');
    // A link that stays inside is followed.
    expect(text).toContain('<imported file="inside-link.md">\nINSIDE\n</imported>');
  });

  it("bring a git-ignored file only into the user's own notes, ignored themselves", () => {
    const root = repoWith({
      '.gitignore': '.env\nCLAUDE.local.md\nprivate/\n*.log\n',
      '.env': 'API_KEY=SECRET',
      'AGENTS.md': '@.env @docs/env-link.md @private/notes.md @docs/ok.md @docs/kept.log',
      'docs/env-link.md': { symlink: '../.env' },
      'docs/ok.md': 'OK',
      'docs/kept.log': 'TRACKED LOG',
      'private/notes.md': 'PRIVATE NOTES',
      'CLAUDE.local.md': '@.env @private/notes.md',
    });
    // Tracked although its name is ignored: the repository's own file.
    git(root, 'add', '-f', 'docs/kept.log');
    const [agents, local] = projectInstructions(root)!.files;
    expect(agents.text).toContain('<imported file="docs/ok.md">\nOK\n</imported>');
    expect(agents.text).toContain('<imported file="docs/kept.log">\nTRACKED LOG\n</imported>');
    expect(agents.text).not.toContain('SECRET');
    expect(agents.text).not.toContain('PRIVATE NOTES');
    expect(local.text).toContain('<imported file=".env">\nAPI_KEY=SECRET\n</imported>');
    expect(local.text).toContain('PRIVATE NOTES');

    // A CLAUDE.local.md the repository commits is the repository's.
    const shared = repoWith({ '.gitignore': '.env\n', '.env': 'API_KEY=SECRET', 'CLAUDE.local.md': '@.env' });
    git(shared, 'add', 'CLAUDE.local.md');
    expect(texts(shared)).toEqual([['CLAUDE.local.md', '@.env']]);
  });

  it('an absolute path inside the repository is read', () => {
    const root = repoWith({ 'docs/a.md': 'ABSOLUTE' });
    writeFileSync(join(root, 'AGENTS.md'), `@${root}/docs/a.md`);
    expect(projectInstructions(root)!.files[0].text).toContain('<imported file="docs/a.md">\nABSOLUTE\n</imported>');
  });

  it('are cut at the limit with a note, and what comes after is left out with one', () => {
    const line = 'x'.repeat(99) + '\n';
    const big = line.repeat(Math.ceil(INSTRUCTION_LIMITS.maxChars / line.length) + 10);
    const root = repoWith({ 'AGENTS.md': 'Rules. @big.md @after.md', 'big.md': big, 'after.md': 'AFTER', 'CLAUDE.local.md': 'LOCAL' });
    const files = projectInstructions(root)!.files;
    const all = files.map((f) => f.text).join('');
    expect(all.length).toBeLessThan(INSTRUCTION_LIMITS.maxChars + 1_000);
    expect(files[0].text).toMatch(/\[Cut here: instructions are limited to 40000 characters\. The rest of big\.md and anything after it were left out/);
    expect(all).not.toContain('AFTER');
    expect(files[1]).toEqual({ file: 'CLAUDE.local.md', text: expect.stringMatching(/^\[Left out: .*Read CLAUDE\.local\.md with read_file/) });
  });
});

describe('sessionInstructions', () => {
  it('keeps what a session read, imports included: an edited import applies to new sessions only', () => {
    const root = repoWith({ 'AGENTS.md': 'Rules @style.md', 'style.md': 'Tabs.', 'CLAUDE.local.md': 'Mine.' });
    const first = sessionInstructions(root, undefined);
    writeFileSync(join(root, 'style.md'), 'Spaces.');
    const again = sessionInstructions(root, first.id);
    expect(again).toEqual(first);
    expect(basePrompt(root, again.instructions)).toContain('Tabs.');
    expect(basePrompt(root, again.instructions)).toContain('Mine.');
    const fresh = sessionInstructions(root, undefined);
    expect(fresh.id).not.toBe(first.id);
    expect(basePrompt(root, fresh.instructions)).toContain('Spaces.');
  });

  it('reads a file kept by an earlier version (one file, no list) and gives the same prompt', () => {
    const root = repoWith({ 'AGENTS.md': 'Changed since.', 'CLAUDE.local.md': 'New notes.' });
    const kept = join(root, '.infinity', 'instructions');
    mkdirSync(kept, { recursive: true });
    writeFileSync(join(kept, '0123456789abcdef.json'), JSON.stringify({ file: 'AGENTS.md', text: 'Use tabs.' }));
    const old = sessionInstructions(root, '0123456789abcdef');
    expect(old).toEqual({ id: '0123456789abcdef', instructions: { files: [{ file: 'AGENTS.md', text: 'Use tabs.' }] } });
    // Byte for byte what that version's basePrompt made of it.
    const BASE_END = `The repository is at ${root}.`;
    const prompt = basePrompt(root, old.instructions);
    expect(prompt.slice(prompt.indexOf(BASE_END))).toBe(`${BASE_END}\n\nProject instructions (from AGENTS.md):\n\nUse tabs.`);
    // "None" as kept then, and a file that is not instructions at all (a new session's then).
    writeFileSync(join(kept, 'aaaaaaaaaaaaaaaa.json'), 'null');
    expect(sessionInstructions(root, 'aaaaaaaaaaaaaaaa')).toEqual({ id: 'aaaaaaaaaaaaaaaa', instructions: undefined });
    writeFileSync(join(kept, 'bbbbbbbbbbbbbbbb.json'), '{"files": [{"file": 1}]}');
    expect(sessionInstructions(root, 'bbbbbbbbbbbbbbbb').instructions?.files.map((f) => f.text)).toEqual(['Changed since.', 'New notes.']);
  });
});
