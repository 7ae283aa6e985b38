import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { onPath } from './path-lookup.js';
import { cleanupTempDirs, tempDir } from './test-support/fixtures.js';

afterEach(cleanupTempDirs);

describe('onPath', () => {
  it('finds an executable in any PATH directory, not a file without the execute bit, nor a missing name', async () => {
    const [a, b] = [await tempDir('ic-path-a-'), await tempDir('ic-path-b-')];
    await writeFile(path.join(b, 'tool'), '#!/bin/sh\n');
    await chmod(path.join(b, 'tool'), 0o755);
    await writeFile(path.join(a, 'plain'), 'data\n');
    await chmod(path.join(a, 'plain'), 0o644);
    const PATH = ['', a, b].join(path.delimiter);
    expect(onPath('tool', PATH)).toBe(true);
    expect(onPath('tool', a)).toBe(false);
    expect(onPath('missing', PATH)).toBe(false);
    expect(onPath('tool', undefined)).toBe(false);
    // As root, access() grants X_OK only when some execute bit is set.
    expect(onPath('plain', PATH)).toBe(false);
  });

  it('agrees with the shell on the programs the sandbox needs here', async () => {
    const { execFileSync } = await import('node:child_process');
    for (const tool of ['git', 'sh', 'no-such-program-here']) {
      let shell = true;
      try {
        execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
      } catch {
        shell = false;
      }
      expect(onPath(tool), tool).toBe(shell);
    }
  });
});
