import { describe, expect, it } from 'vitest';
import { complete, helpText, parseSlash } from './slash-commands.js';

describe('slash commands', () => {
  it('parses every command, with /model taking an optional id or alias and /effort an optional level', () => {
    for (const name of ['help', 'quit', 'new', 'sessions', 'stop', 'diff', 'compact', 'cost', 'mcp']) {
      expect(parseSlash(`/${name}`)).toEqual({ kind: 'command', command: { name } });
    }
    expect(parseSlash('/model')).toEqual({ kind: 'command', command: { name: 'model' } });
    expect(parseSlash('  /model claude-opus-5-5 ')).toEqual({ kind: 'command', command: { name: 'model', id: 'claude-opus-5-5' } });
    expect(parseSlash('/model opus')).toEqual({ kind: 'command', command: { name: 'model', id: 'opus' } });
    expect(parseSlash('/effort')).toEqual({ kind: 'command', command: { name: 'effort' } });
    expect(parseSlash('/effort xhigh')).toEqual({ kind: 'command', command: { name: 'effort', level: 'xhigh' } });
    expect(parseSlash('/exit')).toEqual({ kind: 'command', command: { name: 'quit' } });
  });

  it('treats ordinary text, paths and a doubled slash as a message', () => {
    expect(parseSlash('fix the bug')).toEqual({ kind: 'text' });
    expect(parseSlash('/etc/hosts looks wrong')).toEqual({ kind: 'text' });
    expect(parseSlash('//help is a word')).toEqual({ kind: 'text' });
  });

  it('says clearly what is wrong with an unknown command or a stray argument', () => {
    expect(parseSlash('/frobnicate')).toEqual({ kind: 'error', message: 'Unknown command /frobnicate. Type /help for the list.' });
    expect(parseSlash('/se')).toEqual({ kind: 'error', message: 'Unknown command /se. Did you mean /sessions? Type /help for the list.' });
    expect(parseSlash('/quit now')).toEqual({ kind: 'error', message: '/quit takes no arguments.' });
  });

  it('completes a unique prefix with a trailing space, an ambiguous one to the common prefix', () => {
    expect(complete('/comp')).toEqual({ value: '/compact ', candidates: ['compact'] });
    expect(complete('/s')).toEqual({ value: '/s', candidates: ['sessions', 'stop'] });
    expect(complete('/c')).toEqual({ value: '/co', candidates: ['cost', 'compact'] });
    expect(complete('/')).toMatchObject({ value: '/', candidates: expect.arrayContaining(['help', 'diff']) });
    expect(complete('/m')).toEqual({ value: '/m', candidates: ['model', 'mcp'] });
    expect(complete('/zz')).toEqual({ value: '/zz', candidates: [] });
    expect(complete('/model cl')).toEqual({ value: '/model cl', candidates: [] });
    expect(complete('hello')).toEqual({ value: 'hello', candidates: [] });
  });

  it('documents every command and the keys', () => {
    const help = helpText();
    for (const name of ['/help', '/quit', '/new', '/sessions', '/model [alias|id]', '/effort [level]', '/cost', '/stop', '/diff', '/compact', '/mcp']) expect(help).toContain(name);
    expect(help).toContain('Ctrl+C twice or Ctrl+D quit');
    expect(help).toContain('Esc closes a /diff review');
  });

  describe("the project's commands", () => {
    const project = [
      { name: 'review', description: 'Review the change', argumentHint: '[focus]', file: '.claude/commands/review.md' },
      { name: 'frontend:build', file: '.infinity/commands/frontend/build.md' },
      { name: 'diff', description: 'Our own diff', file: '.claude/commands/diff.md' },
    ];

    it('parses a project command with the text after its name; a built-in wins a name both have', () => {
      expect(parseSlash('/review error paths\nand tests', project)).toEqual({ kind: 'project', name: 'review', args: 'error paths\nand tests' });
      expect(parseSlash('/frontend:build', project)).toEqual({ kind: 'project', name: 'frontend:build', args: '' });
      expect(parseSlash('/diff', project)).toEqual({ kind: 'command', command: { name: 'diff' } });
      expect(parseSlash('/revew', project)).toEqual({ kind: 'error', message: 'Unknown command /revew. Type /help for the list.' });
      expect(parseSlash('/rev', project)).toEqual({ kind: 'error', message: 'Unknown command /rev. Did you mean /review? Type /help for the list.' });
    });

    it('completes project commands with the built-in ones', () => {
      expect(complete('/fr', project)).toEqual({ value: '/frontend:build ', candidates: ['frontend:build'] });
      expect(complete('/re', project)).toEqual({ value: '/re', candidates: ['refresh', 'review'] });
      expect(complete('/d', project)).toEqual({ value: '/diff ', candidates: ['diff'] });
    });

    it('lists them in /help with their description and folder, and says which are not used and why', () => {
      const help = helpText({ commands: project, problems: [{ file: '.claude/commands/x.md', name: 'x', message: '.claude/commands/x.md is left out: it has no prompt.' }] });
      expect(help).toMatch(/Project commands:\n {2}\/review \[focus\] +Review the change \(\.claude\/commands\)\n {2}\/frontend:build +project command \(\.infinity\/commands\)/);
      expect(help).toContain('  .claude/commands/diff.md is not used: /diff is a built-in command.');
      expect(help).toContain('  .claude/commands/x.md is left out: it has no prompt.');
      expect(helpText()).toContain('Project commands: none (Markdown prompts in .infinity/commands/ or .claude/commands/ become /name)');
    });
  });
});
