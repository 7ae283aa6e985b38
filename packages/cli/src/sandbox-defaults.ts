// The sandbox's built-in limits, as the CLI needs them without loading the sandbox package (the
// config is read before the first frame): a repository's config may only lower a limit, also one
// the user left at its default. sandbox-defaults.test.ts holds them equal to the sandbox's own.
import os from 'node:os';

const MB = 1024 * 1024;
const GIB = 1024 * MB;

export interface BuiltInLimits {
  processes: number;
  memoryMB: number;
  fileSizeMB: number;
  /** The most a sandbox's own storage may take on disk. */
  diskMB: number;
  /** Largest changed file put into a diff. */
  maxFileMB: number;
}

export function builtInLimits(totalMemory = os.totalmem()): BuiltInLimits {
  return {
    processes: 1024,
    memoryMB: Math.min(8 * GIB, Math.max(GIB, Math.floor(totalMemory / 2))) / MB,
    fileSizeMB: (4 * GIB) / MB,
    diskMB: (10 * GIB) / MB,
    maxFileMB: 20,
  };
}
