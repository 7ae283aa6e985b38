// Issue 16: a finished run cleans up before it exits, not after. Cleanup that nobody waits for
// (unmounts, layer removal) is still done by the run itself: right after the process has exited,
// nothing of it may be left running, mounted or lying in a temporary directory.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { demoBrain, DEMO_FILES, DEMO_TASK } from 'infinity-code/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, fakeBrain, gitRepo, runCli, tempDir } from './support/cli.js';
import { processesMatching, runMark, survivors } from './support/procs.js';

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: fakeBrain(demoBrain) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

/**
 * Mounts any live process still has (in whatever mount namespace) whose mount point or source lies
 * under one of `dirs`: a namespace with a sandbox's mounts lives as long as one process is in it.
 */
function mountsUnder(dirs: readonly string[]): string[] {
  const found: string[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let table: string;
    try {
      table = readFileSync(`/proc/${e}/mountinfo`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    for (const line of table.split('\n')) {
      // "<id> <parent> <dev> <root> <mount point> <options> ... - <fstype> <source> <super options>"
      const fields = line.split(' ');
      const point = fields[4] ?? '';
      const source = line.slice(line.indexOf(' - ') + 3);
      if (dirs.some((d) => point === d || point.startsWith(`${d}/`) || source.includes(d))) found.push(`pid ${e}: ${line}`);
    }
  }
  return found;
}

describe('what a finished run leaves behind', () => {
  it('nothing of a headless run with children and a background command outlives it: no process, mount or temporary file', async () => {
    // The test command goes to the background after 1 s, so a subscription streams too.
    const repo = gitRepo(DEMO_FILES, { commandTimeoutMs: 1000 });
    const home = tempDir();
    const tmp = tempDir();
    const mark = runMark();
    const stateDir = join(home, '.local', 'state', 'infinity-code');
    const r = await runCli(['-p', DEMO_TASK, '--yes'], {
      cwd: repo,
      home,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, DEMO_TEST_STEPS: '3', TMPDIR: tmp, ...mark.env },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(repo, 'farewell.js'), 'utf8')).toContain('Goodbye');

    // Checked at once: the run itself waited for all of it before exiting.
    expect(survivors(mark)).toEqual([]);
    expect(processesMatching(stateDir)).toEqual([]);
    expect(mountsUnder([stateDir, repo])).toEqual([]);
    // Its temporary files: none in the temp dir it was given, no session storage, no scratch.
    expect(readdirSync(tmp)).toEqual([]);
    expect(readdirSync(join(stateDir, 'sessions'))).toEqual([]);
    expect(existsSync(join(stateDir, 'tmp')) ? readdirSync(join(stateDir, 'tmp')) : []).toEqual([]);
    // What stays is meant to: the backend probe's cache, and the base checkout kept for the next
    // session of this repository (see packages/sandbox/src/base-pool.ts).
    expect(readdirSync(stateDir).filter((n) => !['sessions', 'tmp'].includes(n)).sort()).toEqual(['bases', 'probe.json']);
    const pools = readdirSync(join(stateDir, 'bases'));
    expect(pools).toHaveLength(1);
    expect(readdirSync(join(stateDir, 'bases', pools[0]))).toHaveLength(1);
  });
});
