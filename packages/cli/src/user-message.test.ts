import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { promptWorkspace } from './prompt-workspace.js';
import { promptCompleter } from './tui/prompt-completion.js';
import { prepareTask } from './user-message.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function write(root: string, files: Record<string, string | Buffer>): void {
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), content);
  }
}

/** A git repository with `tracked` committed and `untracked` left in the tree. */
function gitRepo(tracked: Record<string, string | Buffer>, untracked: Record<string, string | Buffer> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'ic-prompt-'));
  dirs.push(root);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' });
  git('init', '-q');
  write(root, tracked);
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qm', 'init');
  write(root, untracked);
  return root;
}

describe('the prompt workspace over a real repository', () => {
  it('lists tracked and untracked files, not ignored ones or node_modules, and lists again when asked', () => {
    const root = gitRepo(
      { '.gitignore': 'build/\n', 'src/a.ts': 'a', 'node_modules/dep/index.js': 'x' },
      { 'src/new.ts': 'n', 'build/out.js': 'o', 'node_modules/other/i.js': 'y' },
    );
    const ws = promptWorkspace(root);
    expect(ws.paths()).toEqual(['.gitignore', 'src/a.ts', 'src/new.ts']);
    write(root, { 'later.md': 'l' });
    // Listed once per session...
    expect(ws.paths()).not.toContain('later.md');
    // ...and again on request (a Tab that matched nothing).
    expect(ws.paths({ fresh: true })).toContain('later.md');
  });

  it('reads mentioned files from the working tree: text, directories (repository files only), binary, and nothing outside', () => {
    const outside = mkdtempSync(join(tmpdir(), 'ic-outside-'));
    dirs.push(outside);
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    const root = gitRepo({ '.gitignore': 'dist/\n', 'src/a.ts': 'const a = 1;\n', 'src/lib/b.ts': 'b', 'img.bin': Buffer.from([1, 0, 2]) }, { 'dist/x.js': 'x' });
    symlinkSync(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    const ws = promptWorkspace(root);
    expect(ws.read('src/a.ts')).toEqual({ kind: 'file', head: Buffer.from('const a = 1;\n'), size: 13 });
    expect(ws.read('src')).toEqual({ kind: 'directory', entries: ['a.ts', 'lib/'] });
    expect(ws.read('dist/')).toEqual({ kind: 'directory', entries: [] });
    expect(ws.read('leak.txt')).toEqual({ kind: 'outside' });
    expect(ws.read('nope.ts')).toEqual({ kind: 'missing' });
    expect(ws.read('src/a.ts/x')).toEqual({ kind: 'missing' });
    expect(prepareTask('what is @img.bin', ws)).toEqual({
      message: 'what is @img.bin',
      notes: ['not attached: img.bin (a binary file (3 B))'],
      warnings: [],
    });
  });
});

describe('@ paths from the directory the user works in', () => {
  const tree = { 'README.md': 'root readme\n', 'pkg/README.md': 'pkg readme\n', 'pkg/src/a.ts': 'export const a = 1;\n', 'docs/guide.md': 'guide\n' };

  it('reads a path from the current directory first, then from the root; `..` may climb to the root', () => {
    const root = gitRepo(tree);
    const ws = promptWorkspace(root, [], join(root, 'pkg'));
    expect(ws.base).toBe('pkg');
    const r = prepareTask('see @src/a.ts, @README.md, @docs/guide.md and @../README.md', ws);
    expect(r.notes).toEqual([
      'attached pkg/src/a.ts (1 line)',
      'attached pkg/README.md (1 line)',
      'attached docs/guide.md (1 line)',
      'attached README.md (1 line)',
    ]);
    expect(r.message).toContain('<attached-file path="pkg/src/a.ts" lines="1">\nexport const a = 1;\n</attached-file>');
    // Missing from both: named as the user meant it, from where they are.
    expect(prepareTask('open @src/mian.ts', ws).notes).toEqual(['not attached: pkg/src/mian.ts (no such file or directory)']);
    // Out of the repository, whichever way.
    expect(prepareTask('read @../../etc/passwd', ws).notes).toEqual(['not attached: ../../etc/passwd (outside the repository)']);
  });

  it('Tab completes a path from there too, and from the root when nothing there matches', () => {
    const root = gitRepo(tree);
    const complete = promptCompleter(promptWorkspace(root, [], join(root, 'pkg')));
    expect(complete('see @sr', 7).value).toBe('see @src/');
    expect(complete('see @src/', 9).value).toBe('see @src/a.ts ');
    expect(complete('see @doc', 8).value).toBe('see @docs/');
  });

  it('at the root, paths are the root\'s as before', () => {
    const root = gitRepo(tree);
    const ws = promptWorkspace(root, [], root);
    expect(ws.base).toBe('');
    expect(prepareTask('see @README.md and @pkg/src/a.ts', ws).notes).toEqual(['attached README.md (1 line)', 'attached pkg/src/a.ts (1 line)']);
  });
});

describe('a headless task', () => {
  const commands = {
    '.claude/commands/review.md': '---\ndescription: Review\nargument-hint: [focus]\n---\nReview the code, focusing on $ARGUMENTS. Style: @STYLE.md',
    '.claude/commands/broken.md': '---\ndescription: never closed\n',
    'STYLE.md': 'Tabs, not spaces.\n',
    'src/a.ts': 'export const a = 1;\n',
  };

  it("runs a project command: its prompt with the arguments, and the files mentioned in it or them attached", () => {
    const ws = promptWorkspace(gitRepo(commands));
    const r = prepareTask('/review error handling in @src/a.ts', ws);
    expect(r.message).toBe(
      'Review the code, focusing on error handling in @src/a.ts. Style: @STYLE.md\n\n' +
        '<attached-file path="src/a.ts" lines="1">\nexport const a = 1;\n</attached-file>\n\n' +
        '<attached-file path="STYLE.md" lines="1">\nTabs, not spaces.\n</attached-file>',
    );
    expect(r.notes).toEqual(['attached src/a.ts (1 line)', 'attached STYLE.md (1 line)']);
    expect(r.warnings).toEqual([]);
  });

  it('sends other text as written: paths, unknown names (with a warning naming the commands), broken commands (saying why)', () => {
    const ws = promptWorkspace(gitRepo(commands));
    expect(prepareTask('/etc/hosts has a typo', ws)).toEqual({ message: '/etc/hosts has a typo', notes: [], warnings: [] });
    expect(prepareTask('/reveiw it', ws)).toEqual({
      message: '/reveiw it',
      notes: [],
      warnings: ['/reveiw is not a project command (/review); it was sent to the model as written.'],
    });
    expect(prepareTask('/broken', ws).warnings).toEqual([
      '.claude/commands/broken.md is left out: its frontmatter (the --- line at the top) has no closing --- line.',
      '/broken was sent to the model as written.',
    ]);
    // A repository without project commands: a slash word is just text.
    expect(prepareTask('/anything', promptWorkspace(gitRepo({ 'a.txt': 'a' }))).warnings).toEqual([]);
  });
});
