import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { LocalSystem, MemoryStore, ScriptedProvider } from '@infinity-code/runtime';
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
    return true;
  };
}

describe('runTui', () => {
  it('renders the app on the given terminal and resolves when the user quits', async () => {
    const system = new LocalSystem({ store: new MemoryStore(), provider: new ScriptedProvider(() => ({ text: 'hi' })), model: 'claude-sonnet-4-5' });
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
    const done = runTui(controller, { model: 'claude-sonnet-4-5', contextWindow: 200_000, backend: 'overlay', sessionId: 'root' }, {
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
    expect(stripVTControlCharacters(stdout.written)).toContain('claude-sonnet-4-5 · ↑0 ↓0 · $0.00 · ctx 0% · sandbox overlay · session root');
  });
});
