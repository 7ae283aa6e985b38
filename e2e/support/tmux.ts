import { execFileSync } from 'node:child_process';
import { shellWord } from '@infinity-code/sandbox/shell-word';

/** A program running in a detached tmux session: the test reads the screen like a user. */
export class TmuxScreen {
  private constructor(readonly name: string) {}

  static start(command: string[], opts: { cwd: string; env: Record<string, string>; width?: number; height?: number }): TmuxScreen {
    const name = `ic-e2e-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const envArgs = Object.entries(opts.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    execFileSync('tmux', [
      'new-session', '-d', '-s', name,
      '-x', String(opts.width ?? 120), '-y', String(opts.height ?? 40),
      '-c', opts.cwd, ...envArgs,
      ...command.map(shellWord),
    ]);
    return new TmuxScreen(name);
  }

  screen(): string {
    return execFileSync('tmux', ['capture-pane', '-p', '-t', this.name], { encoding: 'utf8' });
  }

  /** The screen and everything scrolled off it: a long transcript no longer fits the screen. */
  scrollback(): string {
    return execFileSync('tmux', ['capture-pane', '-p', '-S', '-', '-t', this.name], { encoding: 'utf8' });
  }

  /** Waits until the screen matches (the program drew it), or fails with what was on screen. */
  async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = this.screen();
      if (pattern.test(s)) return s;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} on screen:\n${s}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Types text literally (no key names), like a user at the keyboard. */
  type(text: string): void {
    execFileSync('tmux', ['send-keys', '-t', this.name, '-l', text]);
  }

  /**
   * Pastes text as a terminal does (line breaks as CR), bracketed with ESC[200~ ... ESC[201~ when
   * the program asked for bracketed paste.
   */
  paste(text: string): void {
    const buffer = `${this.name}-paste`;
    execFileSync('tmux', ['set-buffer', '-b', buffer, '--', text]);
    execFileSync('tmux', ['paste-buffer', '-p', '-d', '-b', buffer, '-t', this.name]);
  }

  /** Presses keys by tmux name: Enter, Down, C-c... */
  press(...keys: string[]): void {
    execFileSync('tmux', ['send-keys', '-t', this.name, ...keys]);
  }

  /** Waits until the program has ended (its tmux session closes with it). */
  async waitForExit(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.alive()) {
      if (Date.now() > deadline) throw new Error(`the program did not exit; screen:\n${this.screen()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  alive(): boolean {
    try {
      execFileSync('tmux', ['has-session', '-t', this.name], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  kill(): void {
    try {
      execFileSync('tmux', ['kill-session', '-t', this.name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
}


