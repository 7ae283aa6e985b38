import { describe, expect, it } from 'vitest';
import { complete, helpText, parseSlash } from './slash-commands.js';

describe('slash commands', () => {
  it('parses every command, with /model taking an optional id', () => {
    for (const name of ['help', 'quit', 'new', 'sessions', 'stop', 'diff', 'compact', 'cost', 'mcp']) {
      expect(parseSlash(`/${name}`)).toEqual({ kind: 'command', command: { name } });
    }
    expect(parseSlash('/model')).toEqual({ kind: 'command', command: { name: 'model' } });
    expect(parseSlash('  /model claude-opus-4-5 ')).toEqual({ kind: 'command', command: { name: 'model', id: 'claude-opus-4-5' } });
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
    for (const name of ['/help', '/quit', '/new', '/sessions', '/model [id]', '/cost', '/stop', '/diff', '/compact', '/mcp']) expect(help).toContain(name);
    expect(help).toContain('Ctrl+C twice quit');
  });
});
