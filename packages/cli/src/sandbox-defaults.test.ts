import { DEFAULT_MAX_FILE_BYTES, resolveLimits } from '@infinity-code/sandbox';
import { describe, expect, it } from 'vitest';
import { builtInLimits } from './sandbox-defaults.js';

describe('the built-in limits the config narrows against', () => {
  it("are the sandbox's own", () => {
    for (const total of [512 * 1024 ** 2, 6 * 1024 ** 3, 64 * 1024 ** 3]) {
      const theirs = resolveLimits({}, total);
      const ours = builtInLimits(total);
      expect(ours.processes).toBe(theirs.processes);
      expect(ours.memoryMB * 1024 * 1024).toBe(theirs.memoryBytes);
      expect(ours.fileSizeMB * 1024 * 1024).toBe(theirs.fileSizeBytes);
      expect(ours.diskMB * 1024 * 1024).toBe(theirs.diskBytes);
    }
    expect(builtInLimits().maxFileMB * 1024 * 1024).toBe(DEFAULT_MAX_FILE_BYTES);
  });
});
