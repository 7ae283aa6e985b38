import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { LocalSystem, MemoryStore, ScriptedProvider } from '@infinity-code/runtime';
import { DEFAULT_MODEL } from '@infinity-code/runtime/models';
import { describe, expect, it } from 'vitest';
import { localController } from './local-controller.js';
import { runTui } from './run-tui.js';

/** A terminal's input side: a TTY that tells when the UI switched it to raw mode. */
class FakeStdin extends EventEmitter {
  isTTY = true;
  private data: string | null = null;
  private onRaw: (() => void) | undefined;
  readonly raw = new Promise<void>((resolve) => (this.onRaw = resolve));
  setRawMode(on: boolean) {
    if (on) this.onRaw?.();
  }
  setEncoding() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
  read = () => {
    const d = this.data;
    this.data = null;
    return d;
  };
  type(s: string) {
    this.data = s;
    this.emit('readable');
  }
}

class FakeStdout extends EventEmitter {
  columns = 100;
  rows = 30;
  written = '';
  write = (s: string) => {
    this.written += s;
    this.emit('written');
    return true;
  };

  /** Resolves once the output so far (colours stripped) contains `text`. */
  shows(text: string): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!stripVTControlCharacters(this.written).includes(text)) return;
        this.off('written', check);
        resolve();
      };
      this.on('written', check);
      check();
    });
  }
}

const INFO = { model: DEFAULT_MODEL, contextWindow: 200_000, backend: '…', sessionId: 'root' };

/** A TUI over a real runtime (scripted model) on fake terminal streams; `/quit` ends it. */
function startTui(opts: { ready?: Promise<object>; backend?: Promise<string>; firstMessage?: string }) {
  const requests: string[] = [];
  const system = new LocalSystem({
    store: new MemoryStore(),
    provider: new ScriptedProvider((request) => {
      requests.push(JSON.stringify(request.messages));
      return { text: 'Answered.' };
    }),
    model: INFO.model,
  });
  const controller = localController({ system, rootThreadId: 'root', hooks: {
      quit: async () => {
        await system.close();
        return {};
      },
    }, });
  const stdin = new FakeStdin();
  const stdout = new FakeStdout();
  const done = runTui(controller, INFO, {
    stdin: stdin as unknown as NodeJS.ReadStream,
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: new FakeStdout() as unknown as NodeJS.WriteStream,
    animate: false,
    patchConsole: false,
    ...opts,
  });
  const quit = async () => {
    stdin.type('/quit');
    stdin.type('\r');
    await done;
  };
  return { system, stdin, stdout, requests, quit };
}

describe('runTui', () => {
  it('renders the app on the given terminal and resolves when the user quits', async () => {
    const system = new LocalSystem({ store: new MemoryStore(), provider: new ScriptedProvider(() => ({ text: 'hi' })), model: DEFAULT_MODEL });
    let quit = false;
    const controller = localController({
      system,
      rootThreadId: 'root',
      hooks: {
        quit: async () => {
          quit = true;
          await system.close();
          return {};
        },
      },
    });
    const stdin = new FakeStdin();
    const stdout = new FakeStdout();
    // Streams shaped like a TTY's: Ink only uses the members faked here.
    const done = runTui(controller, { model: DEFAULT_MODEL, contextWindow: 200_000, backend: 'overlay', sessionId: 'root' }, {
      stdin: stdin as unknown as NodeJS.ReadStream,
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: new FakeStdout() as unknown as NodeJS.WriteStream,
      animate: false,
      patchConsole: false,
    });
    await stdin.raw;
    stdin.type('/quit');
    stdin.type('\r');
    await done;
    expect(quit).toBe(true);
    expect(stripVTControlCharacters(stdout.written)).toContain('claude-sonnet-5-5 · ↑0 ↓0 · $0.00 · ctx 0% · sandbox overlay · session root');
  });

  it('sends a message before the sandbox is known (the session is open), and names the sandbox once it is', async () => {
    let sandboxKnown!: (backend: string) => void;
    const tui = startTui({ ready: Promise.resolve({}), backend: new Promise((resolve) => (sandboxKnown = resolve)) });
    await tui.stdin.raw;
    tui.stdin.type('hello');
    tui.stdin.type('\r');
    await tui.stdout.shows('Answered.');
    expect(tui.requests).toHaveLength(1);
    expect(tui.requests[0]).toContain('hello');
    // Ink draws the status line only in its last frame where CI is set: read once the TUI has gone.
    sandboxKnown('overlay');
    await tui.quit();
    expect(stripVTControlCharacters(tui.stdout.written)).toContain('sandbox overlay');
  });

  it('sends the first message as if typed: after a resumed transcript, shown in it, to the model', async () => {
    const history = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'an earlier question' }] },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'An earlier answer.' }] },
    ];
    const tui = startTui({ ready: Promise.resolve({ history }), firstMessage: 'fix the login bug' });
    await tui.stdout.shows('Answered.');
    expect(tui.requests).toHaveLength(1);
    expect(tui.requests[0]).toContain('fix the login bug');
    await tui.quit();
    const out = stripVTControlCharacters(tui.stdout.written);
    expect(out).toMatch(/An earlier answer\.[\s\S]*› fix the login bug[\s\S]*● Answered\./);
  });

  it('says when the sandbox could not start, and only that the session could not when neither did', async () => {
    const sandboxOnly = startTui({ ready: Promise.resolve({}), backend: Promise.reject(new Error('no space left.')) });
    await sandboxOnly.stdout.shows('The sandbox could not start: no space left. Quit with Ctrl+C twice.');
    await sandboxOnly.quit();

    const failure = Promise.reject(new Error('the store is locked.'));
    const neither = startTui({ ready: failure, backend: failure.then(() => 'never') });
    await neither.stdout.shows('The session could not start: the store is locked. Quit with Ctrl+C twice.');
    await neither.quit();
    expect(stripVTControlCharacters(neither.stdout.written)).not.toContain('The sandbox could not start');
  });
});
