import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const child = fileURLToPath(new URL('./test-support/stall-child.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('whenLoopDrains as the runtime\'s stall signal', () => {
  it('ends as stalled, naming the subscription, when nothing is left that could wake a waiting thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ic-stall-'));
    dirs.push(dir);
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((res) => {
      execFile(
        process.execPath,
        ['--conditions=@infinity-code/source', '--import', tsx, child, dir],
        { timeout: 60_000 },
        (err, stdout, stderr) => res({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(run.code, run.stderr).toBe(0);
    // Without the drain check the child ends silently here, printing nothing.
    const end = JSON.parse(run.stdout.trim() || 'null') as { kind: string; waiting?: Array<{ threadId: string; subscription: { name: string } }> } | null;
    expect(end?.kind).toBe('stalled');
    expect(end?.waiting?.map((w) => [w.threadId, w.subscription.name])).toEqual([['t1', 'watch_forever']]);
  });
});
