import { StringDecoder } from 'node:string_decoder';

/** The last lines a server wrote to stderr: said when it fails. */
export class StderrTail {
  private lines: string[] = [];
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly max = 20) {}

  push(chunk: Buffer): void {
    const parts = (this.partial + this.decoder.write(chunk)).split('\n');
    this.partial = parts.pop()!.slice(-2000);
    for (const line of parts) if (line.trim() !== '') this.lines.push(line.slice(0, 500));
    if (this.lines.length > this.max) this.lines = this.lines.slice(-this.max);
  }

  text(): string {
    return [...this.lines, ...(this.partial.trim() !== '' ? [this.partial.slice(0, 500)] : [])].join('\n');
  }
}
