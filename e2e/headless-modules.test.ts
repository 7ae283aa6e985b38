// A headless run never loads the terminal UI: Ink, React and yoga (some 900 KB the TUI needs)
// stay out of its process. The built CLI runs with a loader hook that records every module it
// loads; bundled chunks are read back to their sources through their source maps.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourcesOf } from './support/bundle-files.js';
import { BIN, cleanupTemps, gitRepo, runCli, tempDir } from './support/cli.js';

const RECORDER = new URL('./support/module-log.mjs', import.meta.url).href;
const DIST = dirname(BIN);
/** Modules of the terminal UI: Ink, React (and its reconciler and scheduler), yoga, the markdown renderer and highlighter, our tui/. */
const UI = /[\\/]node_modules[\\/](ink|react|react-reconciler|scheduler|yoga-layout|marked|lowlight|highlight\.js)[\\/]|[\\/]cli[\\/](src|dist)[\\/]tui[\\/]/;

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: () => ({ text: 'Hello from the model.' }) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('the module graph of a headless run', () => {
  it('holds no Ink, React or yoga module, and nothing of the TUI', async () => {
    const log = join(tempDir(), 'modules.log');
    const r = await runCli(['-p', 'Say hello.', '--output-format', 'json'], {
      cwd: gitRepo({ 'a.txt': 'a\n' }),
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, IC_MODULE_LOG: log },
      nodeArgs: ['--import', RECORDER],
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ type: 'result', status: 'success', result: 'Hello from the model.' });
    const loaded = readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
    // The recorder saw the run itself: the headless code, the runtime and SQLite.
    const modules = loaded.flatMap(sourcesOf);
    expect(modules.some((m) => /[\\/]src[\\/]run-headless\.ts$|[\\/]dist[\\/]run-headless\.js$/.test(m))).toBe(true);
    // (better-sqlite3's JavaScript is bundled: seen through the source maps, like the rest.)
    expect(modules.some((m) => /[\\/]better-sqlite3[\\/]lib[\\/]database\.js$/.test(m))).toBe(true);
    expect(modules.filter((m) => UI.test(m))).toEqual([]);
  });

  it('would be seen if loaded: the TUI chunks of the build map back to Ink, React, yoga and the markdown renderer', () => {
    // Guards the check above: a bundle hides its modules, and this reads them back.
    const bundled = existsSync(join(DIST, 'bundle'))
      ? readdirSync(join(DIST, 'bundle')).filter((f) => f.endsWith('.js')).map((f) => join(DIST, 'bundle', f))
      : [];
    const seen = bundled.flatMap((f) => sourcesOf(pathToFileURL(f).href)).filter((m) => UI.test(m));
    for (const name of ['ink', 'react', 'yoga-layout', 'marked', 'lowlight', 'highlight.js']) {
      expect(seen.some((m) => m.includes(`node_modules/${name}/`)), name).toBe(true);
    }
  });
});
