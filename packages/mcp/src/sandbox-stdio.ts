// The MCP stdio transport over a command run in a sandbox (the SDK's own StdioClientTransport
// spawns on the host; this one speaks the same newline-delimited JSON-RPC over the pipes of a
// sandboxed process).
import type { ExecProcess, ExecResult } from '@infinity-code/sandbox';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { StderrTail } from './stderr-tail.js';

/** How long a server may take to exit once its stdin is closed, before it is killed. */
const EXIT_GRACE_MS = 1000;

export class SandboxStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private proc: ExecProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private closing = false;
  /** How the process ended, once it has. */
  exit: ExecResult | undefined;

  constructor(
    private readonly spawn: () => Promise<ExecProcess>,
    readonly stderr: StderrTail,
  ) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  async start(): Promise<void> {
    if (this.proc) throw new Error('SandboxStdioTransport already started');
    const proc = await this.spawn();
    this.proc = proc;
    // A server idling between calls must not keep a finished run alive.
    proc.unref();
    proc.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (err) {
          // A line that isn't JSON-RPC (a server logging to stdout): reported, skipped.
          this.onerror?.(err as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    proc.stderr.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    proc.stdin?.on('error', (err) => this.onerror?.(err));
    void proc.done.then(
      (result) => {
        this.exit = result;
        this.onclose?.();
      },
      (err: unknown) => {
        this.onerror?.(err as Error);
        this.onclose?.();
      },
    );
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.proc?.stdin;
    if (!stdin || stdin.destroyed || !stdin.writable) return Promise.reject(new Error('Not connected: the server process has exited.'));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Closes stdin (a well-behaved server exits), then kills the process group if it hasn't. */
  async close(): Promise<void> {
    const proc = this.proc;
    if (!proc || this.closing) return;
    this.closing = true;
    proc.stdin?.end();
    const exited = await Promise.race([
      proc.done.then(() => true, () => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), EXIT_GRACE_MS).unref()),
    ]);
    if (!exited) proc.kill();
    await proc.done.catch(() => undefined);
    this.buffer.clear();
  }
}
