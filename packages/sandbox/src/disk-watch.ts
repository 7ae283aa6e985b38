import { statfs } from 'node:fs/promises';
import { formatBytes } from './apply-policy.js';
import { SandboxError } from './errors.js';
import type { ExecProcess, ExecResult } from './exec.js';

/**
 * How often a sandbox with a running command is looked at. A look is one statfs call; the storage
 * is measured (du, see storage-usage.ts) only when the file system's free space fell by more
 * than the sandbox's headroom since the last measurement, or when that is FULL_MS old.
 */
const TICK_MS = 250;
/**
 * Measured at least this often while commands run, whatever the free space did: something else
 * freeing space as fast as the sandbox fills it would otherwise hide its growth. The interval
 * doubles, up to QUIET_FULL_MS, while measurements find the storage about the same (a long-lived
 * server in the sandbox, an MCP server, must not cost a du every two seconds for hours).
 */
const FULL_MS = 2_000;
const QUIET_FULL_MS = 30_000;
/** Never measured more often than this many times the last measurement took (a large copy takes long). */
const COST_FACTOR = 10;

const ADVICE = 'Delete files in the sandbox (rm, for instance) to get under it, or have the user raise sandbox.limits.diskMB.';

function limitText(limitBytes: number): string {
  return `its disk limit of ${formatBytes(limitBytes)} (sandbox.limits.diskMB)`;
}

/** A file write refused because it would take the sandbox's storage over its disk limit. */
export class DiskLimitError extends SandboxError {
  readonly limitBytes: number;

  constructor(limitBytes: number, usedBytes: number, writeBytes: number) {
    const over = usedBytes > limitBytes;
    super(
      'disk-limit',
      `Not written: ${
        over
          ? `the sandbox's storage (${formatBytes(usedBytes)}) is over ${limitText(limitBytes)}`
          : `writing ${formatBytes(writeBytes)} would take the sandbox's storage (${formatBytes(usedBytes)}) over ${limitText(limitBytes)}`
      }. ${ADVICE}`,
    );
    this.name = 'DiskLimitError';
    this.limitBytes = limitBytes;
  }
}

/** What a DiskWatch weighs: the sandbox's own storage (see BackendSandbox.storageBytes). */
export interface StorageMeter {
  /** The most the storage may take, in bytes. */
  limitBytes: number;
  /** Bytes it takes now. */
  measure(): Promise<number>;
  /** A directory on the file system that holds it (for its free space). */
  dir: string;
}

interface Watched {
  /** Started while the storage was over the limit: it runs unable to grow a file, and is not stopped. */
  startedOver: boolean;
  stopped: boolean;
}

/**
 * Holds one sandbox's storage to its disk limit. There is no unprivileged file system quota, so
 * the storage is measured: while its commands run (a look every TICK_MS, only while one runs:
 * an idle sandbox costs nothing), when each ends, and before each file write. Once it is over,
 * its running commands are stopped and their results say why; until it is under again, file
 * writes are refused and new commands run unable to grow any file (they may still delete, which
 * is the way back under). A command can overshoot by what it writes between two looks.
 */
export class DiskWatch {
  /** Last measured size, plus what file writes added since (an estimate on the safe side). */
  private used: number | undefined;
  /** The file system's free bytes when `used` was measured. */
  private freeThen: number | undefined;
  private measuredAt = -Infinity;
  private costMs = 0;
  /** Measurements in a row that found the storage within 1% of the limit of the one before. */
  private quiet = 0;
  private measuring: Promise<void> | undefined;
  private measureAgain = false;
  private ticking = false;
  private readonly running = new Map<ExecProcess, Watched>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly meter: StorageMeter) {}

  /** True when the last measurement found the storage over the limit. */
  get over(): boolean {
    return this.used !== undefined && this.used > this.meter.limitBytes;
  }

  /**
   * Follows a command from its start (`startedOver`: see `over`) to its end. The process returned
   * is `proc` whose result, once over the limit, says so (ExecResult.diskLimit); it settles after
   * the look that follows the command's end, so a command that took the storage over is told.
   */
  watch(proc: ExecProcess, startedOver: boolean): ExecProcess {
    const w: Watched = { startedOver, stopped: false };
    this.running.set(proc, w);
    // The first figure, taken beside the sandbox's first command rather than after it: the look
    // at its end then needs only the free space to tell whether to measure again.
    if (this.used === undefined) void this.measure();
    if (this.running.size === 1) {
      this.timer = setInterval(() => this.tick(), TICK_MS);
      this.timer.unref();
    }
    const end = async (): Promise<void> => {
      this.running.delete(proc);
      if (this.running.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
      // One started over the limit may have deleted what took it there: the next command must
      // not start unable to write for a figure that no longer holds.
      await (startedOver ? this.measure() : this.look(true));
    };
    const done = proc.done.then(
      async (r): Promise<ExecResult> => {
        await end();
        const note = this.note(w);
        return note === undefined ? r : { ...r, diskLimit: note };
      },
      async (err: unknown) => {
        await end();
        throw err;
      },
    );
    return { ...proc, done };
  }

  /**
   * Before a file write of `bytes`: refuses it (DiskLimitError) when the storage is over the
   * limit or the write would take it over. Measures first when the figure at hand says no, so a
   * refusal is never based on an estimate.
   */
  async admit(bytes: number): Promise<void> {
    const fits = (): boolean => this.used !== undefined && this.used + bytes <= this.meter.limitBytes;
    if (!fits()) await this.measure();
    // Not measurable here (du failed): the write goes through, as it would without a limit.
    if (this.used === undefined) return;
    if (!fits()) throw new DiskLimitError(this.meter.limitBytes, this.used, bytes);
    this.used += bytes;
  }

  /** Measures again, after something outside a command that may have freed or taken space (a delete, an apply). */
  recheck(): Promise<void> {
    return this.measure();
  }

  private note(w: Watched): string | undefined {
    const limit = limitText(this.meter.limitBytes);
    if (w.stopped) return `Stopped: the sandbox's storage went over ${limit}. ${ADVICE}`;
    if (w.startedOver) {
      return this.over
        ? `The sandbox's storage is over ${limit}, so this command could not grow any file. ${ADVICE}`
        : `The sandbox's storage was over ${limit} when this command started, so it could not grow any file; it is under the limit now.`;
    }
    if (this.over) {
      return `The sandbox's storage is now over ${limit}: until it is under, file writes are refused and commands cannot grow any file. ${ADVICE}`;
    }
    return undefined;
  }

  /** A look while commands run; one at a time, so a slow file system does not pile them up. */
  private tick(): void {
    if (this.ticking) return;
    this.ticking = true;
    void this.look(false).finally(() => {
      this.ticking = false;
    });
  }

  /** One look: the free space, then a measurement if it is due. `atEnd`: a command just ended. */
  private async look(atEnd: boolean): Promise<void> {
    const free = await this.freeBytes();
    if (this.due(free, atEnd)) await this.measure();
  }

  private due(free: number | undefined, atEnd: boolean): boolean {
    const since = performance.now() - this.measuredAt;
    if (this.used === undefined || this.freeThen === undefined || free === undefined) return since >= this.costMs;
    // Whatever the sandbox added, the file system lost at least as much, unless something else
    // freed space meanwhile (the full measurement below). Then it may be over: measured at once
    // when a command ended (its result says so), else no more than half the time, however fast
    // the file system changes around a sandbox near its limit.
    if (this.freeThen - free > this.meter.limitBytes - this.used) return atEnd || since >= this.costMs;
    if (since < COST_FACTOR * this.costMs) return false;
    return this.over || since >= Math.min(QUIET_FULL_MS, FULL_MS * 2 ** this.quiet);
  }

  /** Measures now (one measurement at a time; a request during one gets one more after it). */
  private measure(): Promise<void> {
    if (this.measuring) {
      this.measureAgain = true;
      return this.measuring;
    }
    this.measuring = (async () => {
      do {
        this.measureAgain = false;
        const started = performance.now();
        try {
          const [used, free] = await Promise.all([this.meter.measure(), this.freeBytes()]);
          const same = this.used !== undefined && Math.abs(used - this.used) < this.meter.limitBytes / 100;
          this.quiet = same ? Math.min(this.quiet + 1, 10) : 0;
          this.used = used;
          this.freeThen = free;
        } catch {
          // The previous figure stands; the next look tries again (not sooner than COST_FACTOR allows).
        }
        this.measuredAt = performance.now();
        this.costMs = this.measuredAt - started;
        if (this.over) this.stopRunning();
      } while (this.measureAgain);
    })().finally(() => {
      this.measuring = undefined;
    });
    return this.measuring;
  }

  /** Stops the commands that could have grown the storage; those started over it could not. */
  private stopRunning(): void {
    for (const [proc, w] of this.running) {
      if (w.startedOver || w.stopped) continue;
      w.stopped = true;
      proc.kill();
    }
  }

  private async freeBytes(): Promise<number | undefined> {
    try {
      const s = await statfs(this.meter.dir);
      return s.bfree * s.bsize;
    } catch {
      return undefined;
    }
  }
}
