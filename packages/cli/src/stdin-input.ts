// What a headless run reads from stdin: the prompt, text to append to it, or (with
// --input-format stream-json) user messages as JSON lines, in Claude Code's shapes.
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { EXIT, UserError } from './exit-codes.js';

/** All of `input`, to its end. */
export async function readAll(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * All of `input` when something comes within `waitMs` (then to its end, however long it takes),
 * or undefined when nothing does: a script's stdin that is a pipe nobody writes nor closes (a
 * parent's `execFile`, a CI runner) must not keep a `-p "task"` run waiting forever. An input
 * that ends at once (`< /dev/null`) is an empty string, without the wait.
 */
export function readIfAny(input: Readable, waitMs: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const cleanup = () => {
      clearTimeout(timer);
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onError);
    };
    const onData = (chunk: Buffer | string) => {
      clearTimeout(timer);
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const timer = setTimeout(() => {
      cleanup();
      // Not read any further: the process must be free to end while the pipe stays open.
      input.pause();
      if ('unref' in input && typeof input.unref === 'function') (input.unref as () => void)();
      resolve(undefined);
    }, waitMs);
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('error', onError);
  });
}

/** One line of `--input-format stream-json`: a user message's text, or why the line is not one. */
export type TurnLine = { text: string; note?: string } | { skip: string } | { error: string };

const SHAPE = '{"type":"user","message":{"role":"user","content":"..."}}';

/**
 * A line as Claude Code reads it: `{"type":"user","message":{"role":"user","content":...}}`, the
 * content a string or a list of blocks whose text blocks are joined. A blank line is skipped;
 * so is a line of another type (Claude Code's control messages), with a note.
 */
export function parseTurnLine(line: string): TurnLine {
  if (line.trim() === '') return { skip: '' };
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return { error: `is not JSON; each line must be a user message, ${SHAPE}` };
  }
  const obj = v as { type?: unknown; message?: { role?: unknown; content?: unknown } } | null;
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return { error: `is not a JSON object like ${SHAPE}` };
  if (obj.type !== 'user') return { skip: `a line of type ${JSON.stringify(obj.type)} was left out: only user messages are read` };
  const content = obj.message?.content;
  if (typeof content === 'string') return content.trim() === '' ? { error: 'is a user message with no text' } : { text: content };
  if (!Array.isArray(content)) return { error: `has no message.content (a string, or a list of {"type":"text","text":"..."} blocks): ${SHAPE}` };
  const texts: string[] = [];
  let other = 0;
  for (const b of content as Array<{ type?: unknown; text?: unknown }>) {
    if (typeof b === 'object' && b !== null && b.type === 'text' && typeof b.text === 'string') texts.push(b.text);
    else other++;
  }
  if (texts.join('').trim() === '') return { error: 'is a user message with no text block' };
  return { text: texts.join('\n\n'), ...(other > 0 ? { note: `${other} block(s) other than text were left out` } : {}) };
}

/**
 * The user messages of `input`, one per JSON line, in order, until it ends. `warn` hears of lines
 * left out. A line that is not a user message at all ends the turns with a UserError naming it:
 * a script that writes something else is not doing what it means.
 */
export async function* userTurns(input: Readable, warn: (message: string) => void): AsyncGenerator<string> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    const turn = parseTurnLine(line);
    if ('error' in turn) throw new UserError(`--input-format stream-json: stdin line ${n} ${turn.error}.`, EXIT.usage);
    if ('skip' in turn) {
      if (turn.skip !== '') warn(`stdin line ${n}: ${turn.skip}.`);
      continue;
    }
    if (turn.note) warn(`stdin line ${n}: ${turn.note}.`);
    yield turn.text;
  }
}
