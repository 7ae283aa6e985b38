// A tmux control-mode client (`tmux -C attach`): commands go down one pipe and their replies come
// back on it, so reading the screen or pressing a key spawns no process (a `tmux` process per
// capture takes CPU from the program measured on a 2-core machine, and a key sent by one arrives
// milliseconds after its timestamp). The pane's output arrives on the same pipe as `%output`
// notifications: the screen is read again after each, so nothing polls and a frame is seen about
// one capture's round trip after it was written.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

interface Pending {
  resolve: (lines: string[]) => void;
  reject: (err: Error) => void;
}

/** A screen state waited for, and when the capture that showed it was asked for. */
export interface Seen {
  screen: string;
  at: number;
}

/** Quotes an argument for tmux's command parser (and for sh: the same single-quote rule). */
export function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export class TmuxControl {
  private readonly pending: Pending[] = [];
  private readonly outputListeners = new Set<() => void>();
  private block: { key: string; lines: string[] } | undefined;
  private rest = '';
  private ended = false;
  /** Round trips of captures, for the measurement's resolution. */
  readonly captureMs: number[] = [];
  /** Settles when the client ends: the session it was attached to is gone. */
  readonly closed: Promise<void>;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    readonly target: string,
  ) {
    this.closed = new Promise((resolve) => child.on('close', () => resolve()));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.read(chunk));
    // Replies still waited for when the client ends never come.
    child.on('close', () => {
      this.ended = true;
      for (const p of this.pending.splice(0)) p.reject(new Error(`tmux control client for ${target} ended`));
    });
  }

  /** Attaches to `session` on the tmux server of `tmuxArgs` (its -L socket and -f config). */
  static async attach(tmuxArgs: string[], session: string): Promise<TmuxControl> {
    const child = spawn('tmux', [...tmuxArgs, '-C', 'attach-session', '-t', session], { stdio: ['pipe', 'pipe', 'pipe'] });
    const control = new TmuxControl(child, session);
    // The attach itself is answered like a command.
    await new Promise<string[]>((resolve, reject) => control.pending.push({ resolve, reject }));
    return control;
  }

  /** Sends one command; resolves with its output lines, rejects with tmux's error. */
  command(...args: string[]): Promise<string[]> {
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(new Error(`tmux control client for ${this.target} ended`));
      this.pending.push({ resolve, reject });
      this.child.stdin.write(`${args.map(quote).join(' ')}\n`);
    });
  }

  async screen(): Promise<string> {
    const t0 = performance.now();
    const lines = await this.command('capture-pane', '-p', '-t', this.target);
    this.captureMs.push(performance.now() - t0);
    return lines.join('\n');
  }

  /** Presses keys by tmux name (Enter, C-c...). */
  press(...keys: string[]): Promise<string[]> {
    return this.command('send-keys', '-t', this.target, ...keys);
  }

  /** Types text literally. */
  type(text: string): Promise<string[]> {
    return this.command('send-keys', '-t', this.target, '-l', text);
  }

  /**
   * Resolves once the screen passes `test`: read now, then again after each output of the pane
   * (one capture at a time; output during a capture asks for one more).
   */
  waitForScreen(test: (screen: string) => boolean, what: string, timeoutMs = 30_000): Promise<Seen> {
    return new Promise((resolve, reject) => {
      let busy = false;
      let again = false;
      let done = false;
      let last = '';
      const finish = (result: Seen | Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.outputListeners.delete(check);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const timer = setTimeout(() => finish(new Error(`no ${what} on screen after ${timeoutMs} ms:\n${last}`)), timeoutMs);
      const check = () => {
        if (busy) {
          again = true;
          return;
        }
        busy = true;
        void (async () => {
          do {
            again = false;
            const at = performance.now();
            last = await this.screen().catch((err: unknown) => {
              finish(err instanceof Error ? err : new Error(String(err)));
              return '';
            });
            if (done) return;
            if (test(last)) return finish({ screen: last, at });
          } while (again);
          busy = false;
        })();
      };
      this.outputListeners.add(check);
      void this.closed.then(() => finish(new Error(`the session ended before the ${what} showed; last screen:\n${last}`)));
      check();
    });
  }

  /** Detaches (the session lives on). */
  close(): void {
    if (!this.ended) this.child.stdin.end();
  }

  private read(chunk: string): void {
    const lines = (this.rest + chunk).split('\n');
    this.rest = lines.pop()!;
    for (const line of lines) this.line(line);
  }

  private line(line: string): void {
    if (this.block) {
      const { key, lines } = this.block;
      const ended = line.startsWith(`%end ${key} `);
      if (!ended && !line.startsWith(`%error ${key} `)) {
        lines.push(line);
        return;
      }
      this.block = undefined;
      const p = this.pending.shift();
      if (ended) p?.resolve(lines);
      else p?.reject(new Error(`tmux: ${lines.join('\n')}`));
      return;
    }
    // `%begin <time> <number> <flags>`, closed by `%end` or `%error` with the same time and number.
    const begin = /^%begin (\d+ \d+) /.exec(line);
    if (begin) {
      this.block = { key: begin[1], lines: [] };
      return;
    }
    if (line.startsWith('%output ')) for (const listener of [...this.outputListeners]) listener();
  }
}
