import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UserError } from './exit-codes.js';
import { parseTurnLine, readAll, readIfAny, userTurns } from './stdin-input.js';

describe('stdin of -p "task"', () => {
  it('is read to its end once something comes, however long it then takes', async () => {
    const input = new PassThrough();
    const read = readIfAny(input, 2_000);
    input.write('first part, ');
    setImmediate(() => input.end('the rest\n'));
    expect(await read).toBe('first part, the rest\n');
  });

  it('is empty at once when it ends at once (< /dev/null), and undefined when nothing comes in time', async () => {
    const ended = new PassThrough();
    ended.end();
    expect(await readIfAny(ended, 60_000)).toBe('');
    // A pipe nobody writes nor closes (a parent's execFile): the run goes on without it.
    const silent = new PassThrough();
    expect(await readIfAny(silent, 30)).toBeUndefined();
  });

  it('a real process whose stdin stays open ends without waiting for it', async () => {
    // The child reads stdin the way the CLI does; its parent never closes the pipe.
    const code = `import('${new URL('./stdin-input.ts', import.meta.url).href}').then(async (m) => {
      const got = await m.readIfAny(process.stdin, 100);
      process.stdout.write(JSON.stringify(got ?? null));
    });`;
    const child = spawn(process.execPath, ['--conditions=@infinity-code/source', '--import', 'tsx', '-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exit = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(exit).toBe(0);
    expect(out).toBe('null');
    child.stdin.destroy();
  });

  it('readAll takes everything', async () => {
    const input = new PassThrough();
    input.end('a\nb\n');
    expect(await readAll(input)).toBe('a\nb\n');
  });
});

describe('--input-format stream-json lines', () => {
  it("reads Claude Code's user messages: a string, or text blocks joined", () => {
    expect(parseTurnLine('{"type":"user","message":{"role":"user","content":"Fix it."}}')).toEqual({ text: 'Fix it.' });
    expect(
      parseTurnLine(JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'One.' }, { type: 'text', text: 'Two.' }] } })),
    ).toEqual({ text: 'One.\n\nTwo.' });
    expect(
      parseTurnLine(JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'See.' }, { type: 'image', source: {} }] } })),
    ).toEqual({ text: 'See.', note: '1 block(s) other than text were left out' });
  });

  it('skips blank lines and other types; refuses what is no user message', () => {
    expect(parseTurnLine('   ')).toEqual({ skip: '' });
    expect(parseTurnLine('{"type":"control_request","request":{}}')).toEqual({ skip: 'a line of type "control_request" was left out: only user messages are read' });
    expect(parseTurnLine('not json')).toMatchObject({ error: expect.stringMatching(/^is not JSON/) });
    expect(parseTurnLine('[1]')).toMatchObject({ error: expect.stringMatching(/^is not a JSON object/) });
    expect(parseTurnLine('{"type":"user","message":{"role":"user"}}')).toMatchObject({ error: expect.stringMatching(/^has no message.content/) });
    expect(parseTurnLine('{"type":"user","message":{"role":"user","content":" "}}')).toEqual({ error: 'is a user message with no text' });
  });

  it('gives the turns in order as they come; a bad line ends them with a usage error naming it', async () => {
    const input = new PassThrough();
    const warnings: string[] = [];
    const turns = userTurns(input, (m) => warnings.push(m));
    input.write('{"type":"user","message":{"role":"user","content":"first"}}\n');
    expect(await turns.next()).toEqual({ done: false, value: 'first' });
    input.write('{"type":"system"}\n\n{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second"}]}}\n');
    expect(await turns.next()).toEqual({ done: false, value: 'second' });
    expect(warnings).toEqual(['stdin line 2: a line of type "system" was left out: only user messages are read.']);
    input.end('oops\n');
    const err = await turns.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(/^--input-format stream-json: stdin line 5 is not JSON/);
  });

  it('ends when stdin does', async () => {
    const input = new PassThrough();
    const turns = userTurns(input, () => undefined);
    input.end('{"type":"user","message":{"role":"user","content":"only"}}');
    expect(await turns.next()).toEqual({ done: false, value: 'only' });
    expect(await turns.next()).toEqual({ done: true, value: undefined });
  });
});
