import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProjectCommands } from './project-commands-load.js';
import { commandNameOf, expandCommand, findProjectCommand, parseCommandFile, splitWords, type ProjectCommand } from './project-commands.js';

const command = (body: string, name = 'c'): ProjectCommand => ({ name, body, file: `.claude/commands/${name}.md` });

describe('project command files', () => {
  it('names a command by its path, folders joined with ":" as Claude Code does', () => {
    expect(commandNameOf('review.md')).toBe('review');
    expect(commandNameOf('frontend/build.md')).toBe('frontend:build');
    expect(commandNameOf('a/b/fix-lint_2.v1.MD')).toBe('a:b:fix-lint_2.v1');
    expect(commandNameOf('notes.txt')).toBeUndefined();
    expect(commandNameOf('my command.md')).toBeUndefined();
    expect(commandNameOf('a:b.md')).toBeUndefined();
  });

  it('reads description and argument-hint from the frontmatter and ignores other keys', () => {
    const text = [
      '---',
      'description: "Review the change: carefully"',
      "argument-hint: '[file] [focus]'",
      'allowed-tools: Bash(git diff:*), Read',
      'model: claude-opus-5-5',
      'tags:',
      '  - review',
      '# a comment',
      '---',
      '',
      'Review $ARGUMENTS.',
      '',
    ].join('\n');
    expect(parseCommandFile(text, 'review', '.claude/commands/review.md')).toEqual({
      ok: true,
      command: {
        name: 'review',
        description: 'Review the change: carefully',
        argumentHint: '[file] [focus]',
        body: 'Review $ARGUMENTS.',
        file: '.claude/commands/review.md',
      },
    });
  });

  it('joins a folded description, and takes a file without frontmatter whole', () => {
    const folded = parseCommandFile('---\ndescription: >\n  Two\n  lines\n---\nBody', 'x', 'f');
    expect(folded).toMatchObject({ ok: true, command: { description: 'Two lines', body: 'Body' } });
    expect(parseCommandFile('\uFEFFJust a prompt\r\nwith two lines\r\n', 'x', 'f')).toMatchObject({
      ok: true,
      command: { body: 'Just a prompt\nwith two lines' },
    });
  });

  it('says in one line what is wrong with a malformed file', () => {
    expect(parseCommandFile('---\ndescription: x\nBody', 'x', 'f')).toEqual({
      ok: false,
      message: 'its frontmatter (the --- line at the top) has no closing --- line',
    });
    expect(parseCommandFile('---\ndescription x\n---\nBody', 'x', 'f')).toEqual({
      ok: false,
      message: 'line 2 of its frontmatter is not "key: value"',
    });
    expect(parseCommandFile('---\ndescription: x\n---\n\n', 'x', 'f')).toEqual({
      ok: false,
      message: 'it has no prompt (the text after the frontmatter is empty)',
    });
  });
});

describe('running a project command', () => {
  it('finds `/name args` among the commands, and nothing else', () => {
    const cmds = [command('B', 'frontend:build'), command('R', 'review')];
    expect(findProjectCommand('/frontend:build  prod  now ', cmds)).toEqual({ command: cmds[0], args: 'prod  now' });
    expect(findProjectCommand('/review', cmds)).toEqual({ command: cmds[1], args: '' });
    expect(findProjectCommand('/review\nline two', cmds)).toEqual({ command: cmds[1], args: 'line two' });
    expect(findProjectCommand('/reviews', cmds)).toBeUndefined();
    expect(findProjectCommand('/etc/hosts', cmds)).toBeUndefined();
    expect(findProjectCommand('review', cmds)).toBeUndefined();
  });

  it('puts the arguments in $ARGUMENTS and their words in $1, $2...', () => {
    expect(expandCommand(command('Fix issue #$ARGUMENTS now.'), '123 in src')).toBe('Fix issue #123 in src now.');
    expect(expandCommand(command('From $1 to $2 ($3), all: $ARGUMENTS'), 'a "b c"')).toBe('From a to b c (), all: a "b c"');
    // Inserted text is not expanded again.
    expect(expandCommand(command('$ARGUMENTS / $1'), '$1 x')).toBe('$1 x / $1');
    expect(expandCommand(command('Fix $ARGUMENTS.'), '')).toBe('Fix .');
  });

  it('appends arguments to a prompt that has no place for them, so none are lost', () => {
    expect(expandCommand(command('Tidy up.'), 'the tests')).toBe('Tidy up.\n\nARGUMENTS: the tests');
    expect(expandCommand(command('Tidy up.'), '')).toBe('Tidy up.');
  });

  it('splits words at spaces, a quoted word keeping its spaces', () => {
    expect(splitWords(` a  "b c" 'd e' f"g" `)).toEqual(['a', 'b c', 'd e', 'f"g"']);
  });
});

describe('loading the project commands of a repository', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
  });
  const repo = (files: Record<string, string>) => {
    const root = mkdtempSync(join(tmpdir(), 'ic-commands-'));
    roots.push(root);
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, p)), { recursive: true });
      writeFileSync(join(root, p), text);
    }
    return root;
  };

  it('reads both folders and subfolders; .infinity/commands wins a name; broken files are problems, not errors', () => {
    const root = repo({
      '.claude/commands/review.md': '---\ndescription: Claude review\n---\nclaude $ARGUMENTS',
      '.claude/commands/frontend/build.md': 'build $1',
      '.claude/commands/broken.md': '---\ndescription: x\n',
      '.claude/commands/bad name.md': 'x',
      '.claude/commands/notes.txt': 'not a command',
      '.infinity/commands/review.md': '---\ndescription: Our review\n---\nours $ARGUMENTS',
    });
    const loaded = loadProjectCommands(root);
    expect(loaded.commands.map((c) => [c.name, c.file, c.description])).toEqual([
      ['frontend:build', '.claude/commands/frontend/build.md', undefined],
      ['review', '.infinity/commands/review.md', 'Our review'],
    ]);
    expect(loaded.problems).toEqual([
      {
        file: '.claude/commands/bad name.md',
        message: '.claude/commands/bad name.md is left out: a command name has only letters, digits, "_", "-" and "." in each part.',
      },
      {
        file: '.claude/commands/broken.md',
        name: 'broken',
        message: '.claude/commands/broken.md is left out: its frontmatter (the --- line at the top) has no closing --- line.',
      },
    ]);
  });

  it('finds nothing, quietly, where there are no command folders; follows a symlinked folder', () => {
    const root = repo({ 'a.txt': 'a' });
    expect(loadProjectCommands(root)).toEqual({ commands: [], problems: [] });
    const shared = repo({ 'deploy.md': 'Deploy $ARGUMENTS' });
    mkdirSync(join(root, '.claude'));
    symlinkSync(shared, join(root, '.claude', 'commands'));
    expect(loadProjectCommands(root).commands.map((c) => c.name)).toEqual(['deploy']);
  });
});
