import { chmod, mkdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, tempDir } from './test-support/fixtures.js';
import { stampUpper, type ViewStamp } from './view-stamp.js';

afterEach(cleanupTempDirs);

// Far in the future: no entry counts as fresh, only metadata is compared. Zero: every entry is fresh.
const NOTHING_FRESH: ViewStamp = { digest: '', freshSinceNs: 2n ** 62n };
const ALL_FRESH: ViewStamp = { digest: '', freshSinceNs: 0n };

const WHOLE_SECOND = 1_700_000_000;

async function layer(): Promise<{ upper: string; merged: string }> {
  const upper = await tempDir('ic-upper-');
  const merged = await tempDir('ic-merged-');
  await mkdir(path.join(upper, 'src'));
  await writeFile(path.join(upper, 'src', 'a.js'), 'one\n');
  await writeFile(path.join(upper, 'b.txt'), 'bee\n');
  await mkdir(path.join(merged, 'src'));
  await utimes(path.join(upper, 'src', 'a.js'), WHOLE_SECOND, WHOLE_SECOND);
  return { upper, merged };
}

const digest = async (l: { upper: string; merged: string }, since: ViewStamp) => (await stampUpper(l.upper, l.merged, since))?.digest;

describe('stampUpper', () => {
  it('is the same while nothing changes, and carries the freshness limit it was taken with', async () => {
    const l = await layer();
    const first = await stampUpper(l.upper, l.merged);
    expect(first).toBeDefined();
    // Taken now, a limit just before now (entries changed since then are fresh).
    expect(first!.freshSinceNs).toBeLessThanOrEqual(BigInt(Date.now()) * 1_000_000n);
    expect(first!.freshSinceNs).toBeGreaterThan(BigInt(Date.now() - 10_000) * 1_000_000n);
    expect((await stampUpper(l.upper, l.merged, first))?.digest).toBe(first!.digest);
    expect(await digest(l, NOTHING_FRESH)).toBe(await digest(l, NOTHING_FRESH));
  });

  it('changes with any change to an entry, however small, even one that keeps size and modification time', async () => {
    const changes: Array<[string, (upper: string) => Promise<unknown>]> = [
      ['same size and mtime', async (u) => {
        // The layer's files have whole-second times (see layer()): set again exactly.
        await writeFile(path.join(u, 'src', 'a.js'), 'two\n');
        await utimes(path.join(u, 'src', 'a.js'), WHOLE_SECOND, WHOLE_SECOND);
      }],
      ['mode', (u) => chmod(path.join(u, 'b.txt'), 0o755)],
      ['rename', (u) => rename(path.join(u, 'b.txt'), path.join(u, 'c.txt'))],
      ['removal', (u) => rm(path.join(u, 'b.txt'))],
      ['new file', (u) => writeFile(path.join(u, 'src', 'new.js'), '')],
      ['new directory', (u) => mkdir(path.join(u, 'src', 'lib'))],
    ];
    for (const [what, change] of changes) {
      for (const since of [NOTHING_FRESH, ALL_FRESH]) {
        const l = await layer();
        const before = await digest(l, since);
        await change(l.upper);
        expect(await digest(l, since), what).not.toBe(before);
      }
    }
  });

  it("holds a fresh directory's listing in the merged view (what a layer made opaque would hide), an old one's not", async () => {
    const l = await layer();
    const [freshBefore, oldBefore] = [await digest(l, ALL_FRESH), await digest(l, NOTHING_FRESH)];
    // Only the merged view changes (the lower layers showing through, say): the upper is as it was.
    await writeFile(path.join(l.merged, 'src', 'from-lower.js'), '');
    expect(await digest(l, ALL_FRESH)).not.toBe(freshBefore);
    expect(await digest(l, NOTHING_FRESH)).toBe(oldBefore);
  });

  it("reads a fresh file's bytes (a change the clock's tick could hide), an old one's not", async () => {
    const l = await layer();
    // Bytes count against a budget: past it, no stamp. Only a fresh file's are read.
    await writeFile(path.join(l.upper, 'big.bin'), Buffer.alloc(5 * 1024 * 1024));
    expect(await stampUpper(l.upper, l.merged, ALL_FRESH)).toBeUndefined();
    expect(await stampUpper(l.upper, l.merged, NOTHING_FRESH)).toBeDefined();
  });

  it('gives no stamp for a layer too big to stamp cheaply, or one that is gone', async () => {
    const l = await layer();
    const many = path.join(l.upper, 'many');
    await mkdir(many);
    await Promise.all(Array.from({ length: 4100 }, (_, i) => writeFile(path.join(many, `f${i}`), '')));
    expect(await stampUpper(l.upper, l.merged)).toBeUndefined();
    await rm(l.upper, { recursive: true });
    expect(await stampUpper(l.upper, l.merged)).toBeUndefined();
  });
});
