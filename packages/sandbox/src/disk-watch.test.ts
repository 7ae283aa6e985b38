import os from 'node:os';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DiskWatch } from './disk-watch.js';
import type { ExecProcess, ExecResult } from './exec.js';

const MB = 1024 * 1024;

/** A storage whose size the test sets, counting how often it was measured. */
function meter(limitBytes: number) {
  const m = { limitBytes, size: 0, measured: 0, dir: os.tmpdir() };
  return Object.assign(m, {
    measure: () => {
      m.measured++;
      return Promise.resolve(m.size);
    },
  });
}

/** A command that ends when killed (or when the test ends it). */
function command(): { proc: ExecProcess; killed: () => boolean; end: (r: ExecResult) => void } {
  let killed = false;
  let end!: (r: ExecResult) => void;
  const done = new Promise<ExecResult>((resolve) => (end = resolve));
  const proc: ExecProcess = {
    pid: 1,
    stdin: null,
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    done,
    kill: () => {
      killed = true;
      end({ exitCode: null, signal: 'SIGKILL', cancelled: true });
    },
    unref: () => undefined,
  };
  return { proc, killed: () => killed, end };
}

describe('DiskWatch', () => {
  it('admits writes on its running estimate, and refuses one only after measuring', async () => {
    const m = meter(8 * MB);
    const watch = new DiskWatch(m);
    m.size = 5 * MB;
    await watch.admit(2 * MB);
    expect(m.measured).toBe(1);
    // 9 MB by the estimate: measured again, and the first write turned out to replace a file.
    await watch.admit(2 * MB);
    expect(m.measured).toBe(2);
    // Fits by the estimate (7 MB): no measurement.
    await watch.admit(0.5 * MB);
    expect(m.measured).toBe(2);
    m.size = 7.5 * MB;
    await expect(watch.admit(MB)).rejects.toMatchObject({
      code: 'disk-limit',
      message: expect.stringMatching(/^Not written: writing 1 MB would take the sandbox's storage \(7\.5 MB\) over its disk limit of 8 MB \(sandbox\.limits\.diskMB\)\. Delete files/),
    });
    expect(m.measured).toBe(3);
    expect(watch.over).toBe(false);
  });

  it('once over, stops the commands that could have grown the storage, and says so in their results; one started over runs on', async () => {
    const m = meter(8 * MB);
    const watch = new DiskWatch(m);
    const writer = command();
    const watched = watch.watch(writer.proc, false);
    m.size = 9 * MB;
    await watch.recheck();
    expect(watch.over).toBe(true);
    expect(writer.killed()).toBe(true);
    expect((await watched.done).diskLimit).toMatch(/^Stopped: the sandbox's storage went over its disk limit of 8 MB/);
    await expect(watch.admit(0)).rejects.toMatchObject({ code: 'disk-limit', message: expect.stringMatching(/storage \(9 MB\) is over its disk limit/) });

    // Started over the limit (it cannot grow a file): it deletes, and its end is measured at once.
    const cleaner = command();
    const cleaning = watch.watch(cleaner.proc, true);
    await watch.recheck();
    expect(cleaner.killed()).toBe(false);
    m.size = MB;
    cleaner.end({ exitCode: 0, signal: null, cancelled: false });
    expect((await cleaning.done).diskLimit).toMatch(/when this command started, so it could not grow any file; it is under the limit now\.$/);
    expect(watch.over).toBe(false);
    await watch.admit(MB);
  });
});
